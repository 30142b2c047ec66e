// RUN: %mlax-opt %s --split-input-file --verify-diagnostics --mlax-lower-to-linalg

// schur's inference rule: a batch of square f32/f64/complex matrices, and Z as a result exactly
// when compute_schur_vectors.

func.func @schur_not_square(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{operand must be a batch of square matrices, got shape (3, 2)}}
  %0 = "mlax.schur"(%x) {compute_schur_vectors = false} : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @schur_int(%x: tensor<2x2xi32>) -> tensor<2x2xi32> {
  // expected-error@+1 {{operand must have element type f32, f64, complex64 or complex128, got int32}}
  %0 = "mlax.schur"(%x) {compute_schur_vectors = false} : (tensor<2x2xi32>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}

// -----

func.func @schur_vector(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{operand must have rank at least 2 (a batch of matrices), got shape (3,)}}
  %0 = "mlax.schur"(%x) {compute_schur_vectors = false} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @schur_missing_vectors(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{result type(s) tensor<2x2xf32> differ from the inferred tensor<2x2xf32>, tensor<2x2xf32>}}
  %0 = "mlax.schur"(%x) {compute_schur_vectors = true} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
