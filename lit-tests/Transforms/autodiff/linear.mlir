// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s

// The gradient of sum(tanh(x @ w)) with respect to w: tanh' = (1 + y)(1 - y) from the primal
// output, reduce_sum transposes to a broadcast of the cotangent, dot_general to a
// dot_general with the other operand followed by a transpose into w's layout.
// CHECK-LABEL: func.func private @loss_vjp(%arg0: tensor<4x3xf32>, %arg1: tensor<3x2xf32>, %arg2: tensor<f32>) -> (tensor<f32>, tensor<3x2xf32>)
// CHECK:         %[[XW:.*]] = "mlax.dot_general"(%arg0, %arg1)
// CHECK:         %[[Y:.*]] = "mlax.tanh"(%[[XW]])
// CHECK:         %[[PLUS:.*]] = "mlax.add"(%{{.*}}, %[[Y]])
// CHECK:         %[[MINUS:.*]] = "mlax.sub"(%{{.*}}, %[[Y]])
// CHECK:         %[[D:.*]] = "mlax.mul"(%[[PLUS]], %[[MINUS]])
// CHECK:         %[[L:.*]] = "mlax.reduce_sum"(%[[Y]]) {dimensions = array<i64: 0, 1>}
// CHECK:         %[[CT:.*]] = "mlax.broadcast_in_dim"(%arg2) {broadcast_dimensions = array<i64>, shape = array<i64: 4, 2>}
// CHECK:         %[[CTD:.*]] = "mlax.mul"(%[[CT]], %[[D]])
// CHECK:         %[[G:.*]] = "mlax.dot_general"(%[[CTD]], %arg0) {{{.*}}lhs_contracting_dimensions = array<i64: 0>{{.*}}rhs_contracting_dimensions = array<i64: 0>}
// CHECK:         %[[GW:.*]] = "mlax.transpose"(%[[G]]) {permutation = array<i64: 1, 0>}
// CHECK:         return %[[L]], %[[GW]] : tensor<f32>, tensor<3x2xf32>
func.func @loss(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>) -> tensor<f32> {
  %0 = "mlax.dot_general"(%x, %w) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = "mlax.tanh"(%0) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %2 = "mlax.reduce_sum"(%1) {dimensions = array<i64: 0, 1>} : (tensor<4x2xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}
func.func private @loss_vjp(tensor<4x3xf32>, tensor<3x2xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x2xf32>) attributes {mlax.vjp = {callee = @loss, argnums = array<i64: 1>}}
