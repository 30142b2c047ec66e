// RUN: %mlax-opt %s --split-input-file --verify-diagnostics --mlax-lower-to-linalg

// Bad dimension numbers of gather and scatter are rejected by the op's inference rule.
func.func @gather_collapsed_unsorted(%x: tensor<4x3xf32>, %i: tensor<2x2xi32>) -> tensor<2xf32> {
  // expected-error@+1 {{collapsed_slice_dims (1, 0) must be sorted, distinct and in [0, 2)}}
  %0 = "mlax.gather"(%x, %i) {offset_dims = array<i64>, collapsed_slice_dims = array<i64: 1, 0>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0, 1>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1, 1>, mode = "clip"} : (tensor<4x3xf32>, tensor<2x2xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @gather_start_index_map_length(%x: tensor<4x3xf32>, %i: tensor<2x1xi32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{start_index_map (0, 1) must have one entry per index vector element (1)}}
  %0 = "mlax.gather"(%x, %i) {offset_dims = array<i64: 1>, collapsed_slice_dims = array<i64: 0>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0, 1>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1, 3>, mode = "clip"} : (tensor<4x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @gather_bad_mode(%x: tensor<4xf32>, %i: tensor<2x1xi32>) -> tensor<2xf32> {
  // expected-error@+1 {{mode must be one of ('clip', 'fill', 'promise_in_bounds'), got 'wrap'}}
  %0 = "mlax.gather"(%x, %i) {offset_dims = array<i64>, collapsed_slice_dims = array<i64: 0>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1>, mode = "wrap"} : (tensor<4xf32>, tensor<2x1xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @scatter_updates_shape(%x: tensor<4x3xf32>, %i: tensor<2x1xi32>, %u: tensor<3x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{updates scatter dimensions (3,) must match the indices' batch dimensions (2,)}}
  %0 = "mlax.scatter_add"(%x, %i, %u) {update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "fill"} : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @scatter_batching_sizes(%x: tensor<4x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{operand batching dimension 0 (size 4) and indices batching dimension 0 (size 2) differ in size}}
  %0 = "mlax.scatter"(%x, %i, %u) {update_window_dims = array<i64>, inserted_window_dims = array<i64: 1>, input_batching_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64: 0>, scatter_dims_to_operand_dims = array<i64: 1>, index_vector_dim = 1 : i64, mode = "fill"} : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
