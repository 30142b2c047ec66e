// RUN: %mlax-opt %s --split-input-file --verify-diagnostics --mlax-lower-to-linalg

// The sorting ops' inference rules reject rank 0, a dimension out of range and indices
// that are not i32 of the operand's shape.
func.func @sort_rank0(%x: tensor<f32>) -> tensor<i32> {
  // expected-error@+1 {{operand must have rank at least 1}}
  %0 = "mlax.sort_permutation"(%x) {dimension = 0 : i64} : (tensor<f32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

func.func @sort_dimension(%x: tensor<3xf32>) -> tensor<3xi32> {
  // expected-error@+1 {{dimension 1 out of range for rank 1}}
  %0 = "mlax.sort_permutation"(%x) {dimension = 1 : i64} : (tensor<3xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @apply_index_type(%x: tensor<3xf32>, %p: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error@+1 {{indices must have element type i32, got int64}}
  %0 = "mlax.apply_permutation"(%x, %p) {dimension = 0 : i64} : (tensor<3xf32>, tensor<3xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @apply_shape(%x: tensor<3xf32>, %p: tensor<2xi32>) -> tensor<3xf32> {
  // expected-error@+1 {{indices must have the operand's shape (3,), got (2,)}}
  %0 = "mlax.apply_permutation"(%x, %p) {dimension = 0 : i64} : (tensor<3xf32>, tensor<2xi32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @top_k_too_many(%x: tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xi32>) {
  // expected-error@+1 {{k = 4 must be in [0, 3]}}
  %0:2 = "mlax.top_k"(%x) {k = 4 : i64} : (tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xi32>)
  return %0#0, %0#1 : tensor<2x4xf32>, tensor<2x4xi32>
}
