// RUN: %mlax-opt %s --split-input-file --verify-diagnostics --mlax-lower-to-linalg

// The decompositions' inference rules reject element types LAPACK has no routine for here,
// operands that are not batches of (square) matrices, and mismatched solve shapes.
func.func @cholesky_int(%x: tensor<3x3xi32>) -> tensor<3x3xi32> {
  // expected-error@+1 {{operand must have element type f32, f64, complex64 or complex128, got int32}}
  %0 = "mlax.cholesky"(%x) : (tensor<3x3xi32>) -> tensor<3x3xi32>
  return %0 : tensor<3x3xi32>
}

// -----

func.func @cholesky_not_square(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{operand must be a batch of square matrices, got shape (2, 3)}}
  %0 = "mlax.cholesky"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @lu_vector(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>, tensor<i32>) {
  // expected-error@+1 {{operand must have rank at least 2 (a batch of matrices)}}
  %0:3 = "mlax.lu"(%x) : (tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>, tensor<i32>)
  return %0#0, %0#1, %0#2 : tensor<3xf32>, tensor<i32>, tensor<i32>
}

// -----

func.func @solve_batches(%a: tensor<2x3x3xf32>, %b: tensor<4x3x1xf32>) -> tensor<4x3x1xf32> {
  // expected-error@+1 {{a and b must have the same batch dimensions}}
  %0 = "mlax.triangular_solve"(%a, %b) {conjugate_a = false, left_side = true, lower = true, transpose_a = false, unit_diagonal = false} : (tensor<2x3x3xf32>, tensor<4x3x1xf32>) -> tensor<4x3x1xf32>
  return %0 : tensor<4x3x1xf32>
}

// -----

func.func @solve_side(%a: tensor<3x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{incompatible shapes (3, 3) and (3, 2) (left_side=False)}}
  %0 = "mlax.triangular_solve"(%a, %b) {conjugate_a = false, left_side = false, lower = true, transpose_a = false, unit_diagonal = false} : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @eig_not_square(%x: tensor<3x2xf32>) -> tensor<3xcomplex<f32>> {
  // expected-error@+1 {{operand must be a batch of square matrices, got shape (3, 2)}}
  %0 = "mlax.eig"(%x) {compute_left_eigenvectors = false, compute_right_eigenvectors = false, enable_eigvec_derivs = false} : (tensor<3x2xf32>) -> tensor<3xcomplex<f32>>
  return %0 : tensor<3xcomplex<f32>>
}

// -----

func.func @eig_int(%x: tensor<2x2xi32>) -> tensor<2xcomplex<f32>> {
  // expected-error@+1 {{operand must have element type f32, f64, complex64 or complex128, got int32}}
  %0 = "mlax.eig"(%x) {compute_left_eigenvectors = false, compute_right_eigenvectors = false, enable_eigvec_derivs = false} : (tensor<2x2xi32>) -> tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}
