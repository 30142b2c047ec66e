// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-lower-control-flow, mlax-inline, mlax-lower-to-linalg)' %s | FileCheck %s

// A scan inside a cond inside a while: the calls of declarations that the bodies make are
// lowered too; mlax-inline then inlines the body calls nested in the scf regions (the copies
// use the region's values: %xs is the function's argument, the scan's carry the while's) and
// erases the private functions; mlax-lower-to-linalg lowers the mlax ops inside the regions.
// CHECK-LABEL: func.func @test_nested
// CHECK:         scf.while (%[[I:.*]] = %arg0, %[[V:.*]] = %arg1)
// CHECK:         } do {
// CHECK-NEXT:    ^bb0(%[[I2:.*]]: tensor<i32>, %[[V2:.*]]: tensor<2xf32>):
// CHECK:           scf.if
// CHECK:             scf.for %[[K:.*]] = {{.*}} iter_args(%[[C:.*]] = %[[V2]], %[[ACC:.*]] = {{.*}}) -> (tensor<2xf32>, tensor<3x2xf32>)
// CHECK-NEXT:          %[[X:.*]] = tensor.extract_slice %arg2[%[[K]], 0] [1, 2] [1, 1] : tensor<3x2xf32> to tensor<2xf32>
// CHECK:               linalg.generic {{.*}} ins(%[[C]], %[[X]] : tensor<2xf32>, tensor<2xf32>)
// CHECK:               tensor.insert_slice %[[C]] into %[[ACC]][%[[K]], 0] [1, 2] [1, 1]
// CHECK:           } else {
// CHECK:             linalg.generic {{.*}} ins(%[[V2]], %[[V2]] : tensor<2xf32>, tensor<2xf32>)
// CHECK-NOT:     func.call
// CHECK-NOT:     mlax.
// CHECK-NOT:     func.func private
func.func @test_nested(%n: tensor<i32>, %v: tensor<2xf32>, %xs: tensor<3x2xf32>) -> (tensor<i32>, tensor<2xf32>) {
  %0:2 = func.call @loop(%n, %v, %xs) : (tensor<i32>, tensor<2xf32>, tensor<3x2xf32>) -> (tensor<i32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<i32>, tensor<2xf32>
}
func.func private @loop(tensor<i32>, tensor<2xf32>, tensor<3x2xf32>) -> (tensor<i32>, tensor<2xf32>) attributes {mlax.while = {cond = @positive, body = @step}}
func.func private @positive(%i: tensor<i32>, %v: tensor<2xf32>, %xs: tensor<3x2xf32>) -> tensor<i1> {
  %zero = "mlax.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %0 = "mlax.compare"(%i, %zero) {comparison_direction = "GT"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func private @step(%i: tensor<i32>, %v: tensor<2xf32>, %xs: tensor<3x2xf32>) -> (tensor<i32>, tensor<2xf32>) {
  %one = "mlax.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %odd = "mlax.and"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  %p = "mlax.compare"(%odd, %one) {comparison_direction = "EQ"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %0 = func.call @choose(%p, %v, %xs) : (tensor<i1>, tensor<2xf32>, tensor<3x2xf32>) -> tensor<2xf32>
  %1 = "mlax.sub"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  return %1, %0 : tensor<i32>, tensor<2xf32>
}
func.func private @choose(tensor<i1>, tensor<2xf32>, tensor<3x2xf32>) -> tensor<2xf32> attributes {mlax.cond = {branches = [@square, @scanned]}}
func.func private @square(%v: tensor<2xf32>, %xs: tensor<3x2xf32>) -> tensor<2xf32> {
  %0 = "mlax.mul"(%v, %v) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @scanned(%v: tensor<2xf32>, %xs: tensor<3x2xf32>) -> tensor<2xf32> {
  %0:2 = func.call @scan(%v, %xs) : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>)
  return %0#0 : tensor<2xf32>
}
func.func private @scan(tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) attributes {mlax.scan = {body = @accumulate, length = 3 : i64, reverse = false, num_carry = 1 : i64, num_consts = 0 : i64}}
func.func private @accumulate(%c: tensor<2xf32>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = "mlax.add"(%c, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0, %c : tensor<2xf32>, tensor<2xf32>
}
