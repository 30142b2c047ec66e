// RUN: %mlax-opt --mlax-batch %s | FileCheck %s

// vmap over dimension 1 of %x (moved to 0 by a transpose), %w unbatched: the per-example
// vector-matrix product becomes one matrix product (the batch is a free dimension of the lhs,
// no loop over examples), tanh stays elementwise, the reduction shifts to dimension 1.
// CHECK-LABEL: func.func private @f_vmap(%arg0: tensor<3x5xf32>, %arg1: tensor<3x2xf32>) -> (tensor<5x2xf32>, tensor<5xf32>)
// CHECK-NOT:     mlax.vmap
// CHECK:         %[[X:.*]] = "mlax.transpose"(%arg0) {permutation = array<i64: 1, 0>} : (tensor<3x5xf32>) -> tensor<5x3xf32>
// CHECK:         %[[D:.*]] = "mlax.dot_general"(%[[X]], %arg1) {{{.*}}lhs_contracting_dimensions = array<i64: 1>{{.*}}} : (tensor<5x3xf32>, tensor<3x2xf32>) -> tensor<5x2xf32>
// CHECK:         %[[T:.*]] = "mlax.tanh"(%[[D]]) : (tensor<5x2xf32>) -> tensor<5x2xf32>
// CHECK:         %[[S:.*]] = "mlax.reduce_sum"(%[[T]]) {dimensions = array<i64: 1>} : (tensor<5x2xf32>) -> tensor<5xf32>
// CHECK:         return %[[T]], %[[S]]
func.func @f(%x: tensor<3xf32>, %w: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<f32>) {
  %0 = "mlax.dot_general"(%x, %w) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<3xf32>, tensor<3x2xf32>) -> tensor<2xf32>
  %1 = "mlax.tanh"(%0) : (tensor<2xf32>) -> tensor<2xf32>
  %2 = "mlax.reduce_sum"(%1) {dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<f32>
  return %1, %2 : tensor<2xf32>, tensor<f32>
}
func.func private @f_vmap(tensor<3x5xf32>, tensor<3x2xf32>) -> (tensor<5x2xf32>, tensor<5xf32>) attributes {mlax.vmap = {callee = @f, in_axes = array<i64: 1, -1>, out_axes = array<i64: 0, 0>, axis_size = 5 : i64}}
