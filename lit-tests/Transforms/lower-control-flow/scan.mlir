// RUN: %mlax-opt --mlax-lower-control-flow %s | FileCheck %s

// An scf.for over the length carries the carries and one accumulator per stacked output
// (tensor.empty to start with); each step slices row i of the xs (rank-reducing), calls the
// body with the consts from above, and inserts each y at row i of its accumulator.
// CHECK-LABEL: func.func @test_scan
// CHECK-NEXT:    %[[YS:.*]] = tensor.empty() : tensor<5x2xi32>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[LEN:.*]] = arith.constant 5 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[R:.*]]:2 = scf.for %[[I:.*]] = %[[ZERO]] to %[[LEN]] step %[[ONE]] iter_args(%[[C:.*]] = %arg0, %[[ACC:.*]] = %[[YS]]) -> (tensor<f32>, tensor<5x2xi32>) {
// CHECK-NEXT:      %[[X:.*]] = tensor.extract_slice %arg1[%[[I]], 0] [1, 3] [1, 1] : tensor<5x3xf32> to tensor<3xf32>
// CHECK-NEXT:      %[[B:.*]]:2 = func.call @step(%[[C]], %[[X]], %arg2) : (tensor<f32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<2xi32>)
// CHECK-NEXT:      %[[UP:.*]] = tensor.insert_slice %[[B]]#1 into %[[ACC]][%[[I]], 0] [1, 2] [1, 1] : tensor<2xi32> into tensor<5x2xi32>
// CHECK-NEXT:      scf.yield %[[B]]#0, %[[UP]] : tensor<f32>, tensor<5x2xi32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]#0, %[[R]]#1
// CHECK-NOT:   mlax.scan
func.func @test_scan(%c: tensor<f32>, %xs: tensor<5x3xf32>, %w: tensor<3xf32>) -> (tensor<f32>, tensor<5x2xi32>) {
  %0:2 = func.call @scan(%c, %xs, %w) : (tensor<f32>, tensor<5x3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<5x2xi32>)
  return %0#0, %0#1 : tensor<f32>, tensor<5x2xi32>
}
func.func private @scan(tensor<f32>, tensor<5x3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<5x2xi32>) attributes {mlax.scan = {body = @step, length = 5 : i64, reverse = false, num_carry = 1 : i64, num_consts = 1 : i64}}
func.func private @step(%c: tensor<f32>, %x: tensor<3xf32>, %w: tensor<3xf32>) -> (tensor<f32>, tensor<2xi32>) {
  %0 = "mlax.mul"(%x, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "mlax.reduce_sum"(%0) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  %2 = "mlax.add"(%c, %1) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %3 = "mlax.constant"() {value = dense<[1, 2]> : tensor<2xi32>} : () -> tensor<2xi32>
  return %2, %3 : tensor<f32>, tensor<2xi32>
}

// Reverse: step i works on row length-1-i.
// CHECK-LABEL: func.func @test_reverse
// CHECK:         scf.for %[[I:.*]] = {{.*}} iter_args(%[[C:.*]] = %arg0, %[[ACC:.*]] = {{.*}})
// CHECK-NEXT:      %[[LAST:.*]] = arith.constant 3 : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.subi %[[LAST]], %[[I]] : index
// CHECK-NEXT:      %[[X:.*]] = tensor.extract_slice %arg1[%[[ROW]]] [1] [1] : tensor<4xf32> to tensor<f32>
// CHECK-NEXT:      %[[B:.*]]:2 = func.call @accumulate(%[[C]], %[[X]])
// CHECK-NEXT:      tensor.insert_slice %[[B]]#1 into %[[ACC]][%[[ROW]]] [1] [1] : tensor<f32> into tensor<4xf32>
func.func @test_reverse(%c: tensor<f32>, %xs: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %0:2 = func.call @reverse(%c, %xs) : (tensor<f32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<f32>, tensor<4xf32>
}
func.func private @reverse(tensor<f32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) attributes {mlax.scan = {body = @accumulate, length = 4 : i64, reverse = true, num_carry = 1 : i64, num_consts = 0 : i64}}
func.func private @accumulate(%c: tensor<f32>, %x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0 = "mlax.add"(%c, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0, %c : tensor<f32>, tensor<f32>
}

// Length 0: no loop; the carries come out unchanged and the stacks are empty.
// CHECK-LABEL: func.func @test_empty
// CHECK-NEXT:    %[[YS:.*]] = tensor.empty() : tensor<0x2xf32>
// CHECK-NEXT:    return %arg0, %[[YS]] : tensor<2xf32>, tensor<0x2xf32>
func.func @test_empty(%c: tensor<2xf32>, %xs: tensor<0x2xf32>) -> (tensor<2xf32>, tensor<0x2xf32>) {
  %0:2 = func.call @empty(%c, %xs) : (tensor<2xf32>, tensor<0x2xf32>) -> (tensor<2xf32>, tensor<0x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<0x2xf32>
}
func.func private @empty(tensor<2xf32>, tensor<0x2xf32>) -> (tensor<2xf32>, tensor<0x2xf32>) attributes {mlax.scan = {body = @pass_through, length = 0 : i64, reverse = false, num_carry = 1 : i64, num_consts = 0 : i64}}
func.func private @pass_through(%c: tensor<2xf32>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  return %c, %x : tensor<2xf32>, tensor<2xf32>
}
