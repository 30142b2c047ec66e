// RUN: %mlax-opt %s --split-input-file --verify-diagnostics --mlax-lower-to-linalg

// qr, eigh and svd's inference rules reject element types LAPACK has no routine for,
// operands that are not batches of matrices, (eigh) matrices that are not square, and result
// types other than the inferred ones (svd's reduced u of a tall matrix is m x k).
func.func @qr_int(%x: tensor<3x2xi32>) -> (tensor<3x3xi32>, tensor<3x2xi32>) {
  // expected-error@+1 {{operand must have element type f32, f64, complex64 or complex128, got int32}}
  %0:2 = "mlax.qr"(%x) {full_matrices = true, pivoting = false} : (tensor<3x2xi32>) -> (tensor<3x3xi32>, tensor<3x2xi32>)
  return %0#0, %0#1 : tensor<3x3xi32>, tensor<3x2xi32>
}

// -----

func.func @qr_vector(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  // expected-error@+1 {{operand must have rank at least 2 (a batch of matrices)}}
  %0:2 = "mlax.qr"(%x) {full_matrices = false, pivoting = false} : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// pivoting = true gives the permutation as a third result; the (variadic) port alone cannot say so.
func.func @qr_pivoting_without_permutation(%x: tensor<3x5xf32>) -> (tensor<3x3xf32>, tensor<3x5xf32>) {
  // expected-error@+1 {{differ from the inferred tensor<3x3xf32>, tensor<3x5xf32>, tensor<5xi32>}}
  %0:2 = "mlax.qr"(%x) {full_matrices = true, pivoting = true} : (tensor<3x5xf32>) -> (tensor<3x3xf32>, tensor<3x5xf32>)
  return %0#0, %0#1 : tensor<3x3xf32>, tensor<3x5xf32>
}

// -----

func.func @eigh_not_square(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2xf32>) {
  // expected-error@+1 {{operand must be a batch of square matrices, got shape (2, 3)}}
  %0:2 = "mlax.eigh"(%x) {lower = true, sort_eigenvalues = true} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<2xf32>
}

// -----

func.func @svd_int(%x: tensor<3x3xi64>) -> (tensor<3xi64>, tensor<0x0xi64>, tensor<0x0xi64>) {
  // expected-error@+1 {{operand must have element type f32, f64, complex64 or complex128, got int64}}
  %0:3 = "mlax.svd"(%x) {compute_uv = false, full_matrices = false} : (tensor<3x3xi64>) -> (tensor<3xi64>, tensor<0x0xi64>, tensor<0x0xi64>)
  return %0#0, %0#1, %0#2 : tensor<3xi64>, tensor<0x0xi64>, tensor<0x0xi64>
}

// -----

func.func @svd_wrong_result(%x: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x3xf32>, tensor<2x2xf32>) {
  // expected-error@+1 {{differ from the inferred tensor<2xf32>, tensor<3x2xf32>, tensor<2x2xf32>}}
  %0:3 = "mlax.svd"(%x) {compute_uv = true, full_matrices = false} : (tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x3xf32>, tensor<2x2xf32>)
  return %0#0, %0#1, %0#2 : tensor<2xf32>, tensor<3x3xf32>, tensor<2x2xf32>
}

// -----

// A complex Hermitian matrix's eigenvalues are real: a complex w is not the inferred type.
func.func @eigh_complex_values(%x: tensor<2x2xcomplex<f32>>) -> (tensor<2x2xcomplex<f32>>, tensor<2xcomplex<f32>>) {
  // expected-error@+1 {{differ from the inferred tensor<2x2xcomplex<f32>>, tensor<2xf32>}}
  %0:2 = "mlax.eigh"(%x) {lower = true, sort_eigenvalues = true} : (tensor<2x2xcomplex<f32>>) -> (tensor<2x2xcomplex<f32>>, tensor<2xcomplex<f32>>)
  return %0#0, %0#1 : tensor<2x2xcomplex<f32>>, tensor<2xcomplex<f32>>
}
