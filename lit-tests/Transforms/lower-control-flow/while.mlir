// RUN: %mlax-opt --mlax-lower-control-flow %s | FileCheck %s

// The carries are the scf.while's loop-carried values; the consts (%w) are used from above.
// The before region calls the cond function and tests its i1, the after region calls the body.
// CHECK-LABEL: func.func @test_while
// CHECK-NEXT:    %[[R:.*]]:2 = scf.while (%[[I:.*]] = %arg0, %[[V:.*]] = %arg1) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>) {
// CHECK-NEXT:      %[[C:.*]] = func.call @keep_going(%[[I]], %[[V]], %arg2) : (tensor<i32>, tensor<4xf32>, tensor<4xf32>) -> tensor<i1>
// CHECK-NEXT:      %[[P:.*]] = tensor.extract %[[C]][] : tensor<i1>
// CHECK-NEXT:      scf.condition(%[[P]]) %[[I]], %[[V]] : tensor<i32>, tensor<4xf32>
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%[[I2:.*]]: tensor<i32>, %[[V2:.*]]: tensor<4xf32>):
// CHECK-NEXT:      %[[B:.*]]:2 = func.call @step(%[[I2]], %[[V2]], %arg2) : (tensor<i32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
// CHECK-NEXT:      scf.yield %[[B]]#0, %[[B]]#1 : tensor<i32>, tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]#0, %[[R]]#1
// CHECK-NOT:   mlax.while
func.func @test_while(%i: tensor<i32>, %v: tensor<4xf32>, %w: tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>) {
  %0:2 = func.call @loop(%i, %v, %w) : (tensor<i32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<i32>, tensor<4xf32>
}
func.func private @loop(tensor<i32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>) attributes {mlax.while = {cond = @keep_going, body = @step}}
func.func private @keep_going(%i: tensor<i32>, %v: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<i1> {
  %ten = "mlax.constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
  %0 = "mlax.compare"(%i, %ten) {comparison_direction = "LT"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func private @step(%i: tensor<i32>, %v: tensor<4xf32>, %w: tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>) {
  %one = "mlax.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %0 = "mlax.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  %1 = "mlax.mul"(%v, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<i32>, tensor<4xf32>
}
