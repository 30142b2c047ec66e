// RUN: %mlax-opt --mlax-expand-transforms %s | FileCheck %s

// vmap of vmap: the inner vmap's body (a vector dot) is batched by the outer one as well; both
// batch dimensions become batch dimensions of one dot_general.
// CHECK-NOT:   mlax.vmap =
// CHECK-LABEL: func.func private @inner_vmap_vmap(%arg0: tensor<2x5x3xf32>) -> tensor<2x5xf32>
// CHECK:         "mlax.dot_general"(%arg0, %arg0) {{{.*}}lhs_batch_dimensions = array<i64: 0, 1>{{.*}}} : (tensor<2x5x3xf32>, tensor<2x5x3xf32>) -> tensor<2x5xf32>
func.func @dot(%v: tensor<3xf32>) -> tensor<f32> {
  %0 = "mlax.dot_general"(%v, %v) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @inner_vmap(tensor<5x3xf32>) -> tensor<5xf32> attributes {mlax.vmap = {callee = @dot, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 5 : i64}}
func.func @inner(%m: tensor<5x3xf32>) -> tensor<5xf32> {
  %0 = func.call @inner_vmap(%m) : (tensor<5x3xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
func.func private @inner_vmap_vmap(tensor<2x5x3xf32>) -> tensor<2x5xf32> attributes {mlax.vmap = {callee = @inner, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 2 : i64}}
