// RUN: %mlax-opt --mlax-batch %s | FileCheck %s

// gather with a batched operand: the batch is one more window dimension (slice size 2) at
// result dimension 0. Batched indices: one more batch dimension of the indices. Both: a
// batching dimension pair.
// CHECK-LABEL: func.func private @f_vmap_operand
// CHECK:         "mlax.gather"(%arg0, %arg1) {collapsed_slice_dims = array<i64: 1>, index_vector_dim = 1 : i64, mode = "clip", offset_dims = array<i64: 0, 2>, operand_batching_dims = array<i64>, slice_sizes = array<i64: 2, 1, 4>, start_index_map = array<i64: 1>, start_indices_batching_dims = array<i64>} : (tensor<2x5x4xf32>, tensor<3x1xi32>) -> tensor<2x3x4xf32>
// CHECK-LABEL: func.func private @f_vmap_indices
// CHECK:         "mlax.gather"(%arg0, %arg1) {collapsed_slice_dims = array<i64: 0>, index_vector_dim = 2 : i64, mode = "clip", offset_dims = array<i64: 2>, operand_batching_dims = array<i64>, slice_sizes = array<i64: 1, 4>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>} : (tensor<5x4xf32>, tensor<2x3x1xi32>) -> tensor<2x3x4xf32>
// CHECK-LABEL: func.func private @f_vmap_both
// CHECK:         "mlax.gather"(%arg0, %arg1) {collapsed_slice_dims = array<i64: 1>, index_vector_dim = 2 : i64, mode = "clip", offset_dims = array<i64: 2>, operand_batching_dims = array<i64: 0>, slice_sizes = array<i64: 1, 1, 4>, start_index_map = array<i64: 1>, start_indices_batching_dims = array<i64: 0>}
func.func @f(%x: tensor<5x4xf32>, %i: tensor<3x1xi32>) -> tensor<3x4xf32> {
  %0 = "mlax.gather"(%x, %i) {offset_dims = array<i64: 1>, collapsed_slice_dims = array<i64: 0>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1, 4>, mode = "clip"} : (tensor<5x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
func.func private @f_vmap_operand(tensor<2x5x4xf32>, tensor<3x1xi32>) -> tensor<2x3x4xf32> attributes {mlax.vmap = {callee = @f, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 2 : i64}}
func.func private @f_vmap_indices(tensor<5x4xf32>, tensor<2x3x1xi32>) -> tensor<2x3x4xf32> attributes {mlax.vmap = {callee = @f, in_axes = array<i64: -1, 0>, out_axes = array<i64: 0>, axis_size = 2 : i64}}
func.func private @f_vmap_both(tensor<2x5x4xf32>, tensor<2x3x1xi32>) -> tensor<2x3x4xf32> attributes {mlax.vmap = {callee = @f, in_axes = array<i64: 0, 0>, out_axes = array<i64: 0>, axis_size = 2 : i64}}

// A scatter with batched indices broadcasts the operand and the updates, then pairs the
// batch up as a batching dimension.
// CHECK-LABEL: func.func private @g_vmap
// CHECK:         %[[X:.*]] = "mlax.broadcast_in_dim"(%arg0) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 3, 5>}
// CHECK:         %[[U:.*]] = "mlax.broadcast_in_dim"(%arg2) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 3, 2>}
// CHECK:         "mlax.scatter_add"(%[[X]], %arg1, %[[U]]) {index_vector_dim = 2 : i64, input_batching_dims = array<i64: 0>, inserted_window_dims = array<i64: 1>, mode = "fill", scatter_dims_to_operand_dims = array<i64: 1>, scatter_indices_batching_dims = array<i64: 0>, update_window_dims = array<i64>}
func.func @g(%x: tensor<5xf32>, %i: tensor<2x1xi32>, %u: tensor<2xf32>) -> tensor<5xf32> {
  %0 = "mlax.scatter_add"(%x, %i, %u) {update_window_dims = array<i64>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "fill"} : (tensor<5xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
func.func private @g_vmap(tensor<5xf32>, tensor<3x2x1xi32>, tensor<2xf32>) -> tensor<3x5xf32> attributes {mlax.vmap = {callee = @g, in_axes = array<i64: -1, 0, -1>, out_axes = array<i64: 0>, axis_size = 3 : i64}}

// dynamic_slice / dynamic_update_slice with a batched start index: the starts become a
// (batch, rank) index matrix for a clamping gather / scatter with the batch paired up.
// CHECK-LABEL: func.func private @h_vmap
// CHECK:         %[[X:.*]] = "mlax.broadcast_in_dim"(%arg0) {broadcast_dimensions = array<i64: 1, 2>, shape = array<i64: 4, 5, 3>}
// CHECK:         %[[C0:.*]] = "mlax.reshape"(%arg1) {shape = array<i64: 4, 1>}
// CHECK:         %[[C1:.*]] = "mlax.broadcast_in_dim"(%{{.*}}) {broadcast_dimensions = array<i64>, shape = array<i64: 4, 1>}
// CHECK:         %[[M:.*]] = "mlax.concatenate"(%[[C0]], %[[C1]]) {dimension = 1 : i64} : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
// CHECK:         "mlax.gather"(%[[X]], %[[M]]) {collapsed_slice_dims = array<i64>, index_vector_dim = 1 : i64, mode = "clip", offset_dims = array<i64: 1, 2>, operand_batching_dims = array<i64: 0>, slice_sizes = array<i64: 1, 2, 3>, start_index_map = array<i64: 1, 2>, start_indices_batching_dims = array<i64: 0>}
// CHECK:         "mlax.scatter"({{.*}}) {index_vector_dim = 1 : i64, input_batching_dims = array<i64: 0>, inserted_window_dims = array<i64>, mode = "clip", scatter_dims_to_operand_dims = array<i64: 1, 2>, scatter_indices_batching_dims = array<i64: 0>, update_window_dims = array<i64: 1, 2>} : (tensor<4x5x3xf32>, tensor<4x2xi32>, tensor<4x2x3xf32>) -> tensor<4x5x3xf32>
func.func @h(%x: tensor<5x3xf32>, %i: tensor<i32>, %u: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<5x3xf32>) {
  %z = "mlax.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %0 = "mlax.dynamic_slice"(%x, %i, %z) {slice_sizes = array<i64: 2, 3>} : (tensor<5x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  %1 = "mlax.dynamic_update_slice"(%x, %u, %i, %z) : (tensor<5x3xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<5x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<5x3xf32>
}
func.func private @h_vmap(tensor<5x3xf32>, tensor<4xi32>, tensor<2x3xf32>) -> (tensor<4x2x3xf32>, tensor<4x5x3xf32>) attributes {mlax.vmap = {callee = @h, in_axes = array<i64: -1, 0, -1>, out_axes = array<i64: 0, 0>, axis_size = 4 : i64}}
