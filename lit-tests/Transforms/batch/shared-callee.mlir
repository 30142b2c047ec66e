// RUN: %mlax-opt --mlax-batch %s | FileCheck %s
// RUN: %mlax-opt --mlax-batch %s | %mlax-run --entry batched --random-inputs 3 | FileCheck %s --check-prefix=OUT
// RUN: %mlax-opt --mlax-batch %s | %mlax-run --entry batched_flat --random-inputs 3 | FileCheck %s --check-prefix=OUT

// A nested jit's function (mlax.jit_name) called at two sites is batched once per set of
// batched operands, size and axis name (@layer_vmap), and called at both; a call with no
// batched operand stays a call of @layer. @net_flat (the layer inlined) gives the same numbers.

// OUT: result[0]: tensor<4xf32> = [-0.010519385, -0.014679432, 0.3825289, -0.01805669]

// CHECK-LABEL: func.func private @net_vmap(
// CHECK:         call @layer(%arg1, %arg2)
// CHECK:         call @layer_vmap(
// CHECK-NEXT:    call @layer_vmap(
// CHECK-NOT:   func.func private @layer_vmap_1
// CHECK-LABEL: func.func private @layer_vmap(
// CHECK-SAME:    tensor<4x3xf32>
// CHECK-SAME:    mlax.derived = "vmap layer 10 4 None"
func.func private @layer(%h: tensor<3xf32>, %w: tensor<3x3xf32>) -> tensor<3xf32> attributes {mlax.jit_name = "layer"} {
  %0 = "mlax.dot_general"(%h, %w) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<3xf32>, tensor<3x3xf32>) -> tensor<3xf32>
  %1 = "mlax.tanh"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
func.func private @net(%x: tensor<3xf32>, %b: tensor<3xf32>, %w: tensor<3x3xf32>) -> tensor<f32> {
  %c = func.call @layer(%b, %w) : (tensor<3xf32>, tensor<3x3xf32>) -> tensor<3xf32>
  %h0 = "mlax.add"(%x, %c) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %h1 = func.call @layer(%h0, %w) : (tensor<3xf32>, tensor<3x3xf32>) -> tensor<3xf32>
  %h2 = func.call @layer(%h1, %w) : (tensor<3xf32>, tensor<3x3xf32>) -> tensor<3xf32>
  %s = "mlax.reduce_sum"(%h2) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func private @net_flat(%x: tensor<3xf32>, %b: tensor<3xf32>, %w: tensor<3x3xf32>) -> tensor<f32> {
  %d0 = "mlax.dot_general"(%b, %w) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<3xf32>, tensor<3x3xf32>) -> tensor<3xf32>
  %c = "mlax.tanh"(%d0) : (tensor<3xf32>) -> tensor<3xf32>
  %h0 = "mlax.add"(%x, %c) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %d1 = "mlax.dot_general"(%h0, %w) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<3xf32>, tensor<3x3xf32>) -> tensor<3xf32>
  %h1 = "mlax.tanh"(%d1) : (tensor<3xf32>) -> tensor<3xf32>
  %d2 = "mlax.dot_general"(%h1, %w) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<3xf32>, tensor<3x3xf32>) -> tensor<3xf32>
  %h2 = "mlax.tanh"(%d2) : (tensor<3xf32>) -> tensor<3xf32>
  %s = "mlax.reduce_sum"(%h2) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func private @net_vmap(tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>) -> tensor<4xf32> attributes {mlax.vmap = {callee = @net, in_axes = array<i64: 0, -1, -1>, out_axes = array<i64: 0>, axis_size = 4 : i64}}
func.func private @net_flat_vmap(tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>) -> tensor<4xf32> attributes {mlax.vmap = {callee = @net_flat, in_axes = array<i64: 0, -1, -1>, out_axes = array<i64: 0>, axis_size = 4 : i64}}
func.func @batched(%x: tensor<4x3xf32>, %b: tensor<3xf32>, %w: tensor<3x3xf32>) -> tensor<4xf32> {
  %r = func.call @net_vmap(%x, %b, %w) : (tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @batched_flat(%x: tensor<4x3xf32>, %b: tensor<3xf32>, %w: tensor<3x3xf32>) -> tensor<4xf32> {
  %r = func.call @net_flat_vmap(%x, %b, %w) : (tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
