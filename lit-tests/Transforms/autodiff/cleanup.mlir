// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-autodiff, mlax-cleanup)' %s | FileCheck %s

// What differentiation leaves, mlax-cleanup tidies: the two broadcast ones of tanh's
// derivative (1 + y, 1 - y) fold into one constant shared by CSE; nothing else changes.
// CHECK-LABEL: func.func private @loss_vjp
// CHECK:         %[[Y:.*]] = "mlax.tanh"
// CHECK-NEXT:    %[[ONE:.*]] = "mlax.constant"() {value = dense<1.000000e+00> : tensor<4x2xf32>}
// CHECK-NEXT:    "mlax.add"(%[[ONE]], %[[Y]])
// CHECK-NEXT:    "mlax.sub"(%[[ONE]], %[[Y]])
// CHECK-NOT:     "mlax.constant"
// CHECK:         return
func.func @loss(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>) -> tensor<f32> {
  %0 = "mlax.dot_general"(%x, %w) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = "mlax.tanh"(%0) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %2 = "mlax.reduce_sum"(%1) {dimensions = array<i64: 0, 1>} : (tensor<4x2xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}
func.func private @loss_vjp(tensor<4x3xf32>, tensor<3x2xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x2xf32>) attributes {mlax.vjp = {callee = @loss, argnums = array<i64: 1>}}
