// RUN: %mlax-opt %s --split-input-file --verify-diagnostics --mlax-lower-to-linalg

// The Householder reductions' inference rules: jax's shape errors (householder_product needs
// m >= n and at most min(m, n) taus of a's type; hessenberg and tridiagonal square, non-empty
// matrices) and LAPACK's element types.
func.func @householder_product_wide(%a: tensor<2x3xf32>, %t: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{The first argument to householder_product must have at least as many rows as columns, got shape (2, 3)}}
  %0 = "mlax.householder_product"(%a, %t) : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @householder_product_taus(%a: tensor<4x3xf32>, %t: tensor<4xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{must not have more rows than the minimum of the first argument's rows and columns}}
  %0 = "mlax.householder_product"(%a, %t) : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @householder_product_dtypes(%a: tensor<4x3xf32>, %t: tensor<3xf64>) -> tensor<4x3xf32> {
  // expected-error@+1 {{a and taus must have the same dtype, got float32 and float64}}
  %0 = "mlax.householder_product"(%a, %t) : (tensor<4x3xf32>, tensor<3xf64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @householder_product_batch(%a: tensor<2x4x3xf32>, %t: tensor<3x3xf32>) -> tensor<2x4x3xf32> {
  // expected-error@+1 {{taus must have shape (..., k) with a's batch dimensions}}
  %0 = "mlax.householder_product"(%a, %t) : (tensor<2x4x3xf32>, tensor<3x3xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

func.func @geqrf_int(%x: tensor<3x2xi32>) -> (tensor<3x2xi32>, tensor<2xi32>) {
  // expected-error@+1 {{operand must have element type f32, f64, complex64 or complex128, got int32}}
  %0:2 = "mlax.geqrf"(%x) : (tensor<3x2xi32>) -> (tensor<3x2xi32>, tensor<2xi32>)
  return %0#0, %0#1 : tensor<3x2xi32>, tensor<2xi32>
}

// -----

func.func @hessenberg_not_square(%x: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<1xf32>) {
  // expected-error@+1 {{operand must be a batch of square matrices, got shape (3, 2)}}
  %0:2 = "mlax.hessenberg"(%x) : (tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<1xf32>)
  return %0#0, %0#1 : tensor<3x2xf32>, tensor<1xf32>
}

// -----

func.func @tridiagonal_empty(%x: tensor<0x0xf32>) -> (tensor<0x0xf32>, tensor<0xf32>, tensor<0xf32>, tensor<0xf32>) {
  // expected-error@+1 {{The input to tridiagonal must be a square matrix. Got shape (0, 0).}}
  %0:4 = "mlax.tridiagonal"(%x) {lower = true} : (tensor<0x0xf32>) -> (tensor<0x0xf32>, tensor<0xf32>, tensor<0xf32>, tensor<0xf32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<0x0xf32>, tensor<0xf32>, tensor<0xf32>, tensor<0xf32>
}

// -----

func.func @geqp3_pivots(%a: tensor<3x2xf32>, %p: tensor<2xi64>) -> (tensor<3x2xf32>, tensor<2xi64>, tensor<2xf32>) {
  // expected-error@+1 {{jpvt must have element type int32 (LAPACK's), got int64}}
  %0:3 = "mlax.geqp3"(%a, %p) : (tensor<3x2xf32>, tensor<2xi64>) -> (tensor<3x2xf32>, tensor<2xi64>, tensor<2xf32>)
  return %0#0, %0#1, %0#2 : tensor<3x2xf32>, tensor<2xi64>, tensor<2xf32>
}

// -----

// ormqr: c's rows (left) or columns (right) are Q's order, a's row count (jax's message).
func.func @ormqr_left_rows(%a: tensor<4x3xf32>, %t: tensor<3xf32>, %c: tensor<5x2xf32>) -> tensor<5x2xf32> {
  // expected-error@+1 {{ormqr with left=True expects c to have the same number of rows as the Householder matrix a. Got a shape (4, 3) and c shape (5, 2).}}
  %0 = "mlax.ormqr"(%a, %t, %c) {left = true, transpose = false} : (tensor<4x3xf32>, tensor<3xf32>, tensor<5x2xf32>) -> tensor<5x2xf32>
  return %0 : tensor<5x2xf32>
}

// -----

func.func @ormqr_right_columns(%a: tensor<4x3xf32>, %t: tensor<3xf32>, %c: tensor<2x5xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{ormqr with left=False expects c to have the same number of columns as the Householder matrix a has rows. Got a shape (4, 3) and c shape (2, 5).}}
  %0 = "mlax.ormqr"(%a, %t, %c) {left = false, transpose = true} : (tensor<4x3xf32>, tensor<3xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @ormqr_too_many_taus(%a: tensor<4x3xf32>, %t: tensor<4xf32>, %c: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{ormqr: taus may have at most min(m, n) reflectors, got 4 for a of shape (4, 3)}}
  %0 = "mlax.ormqr"(%a, %t, %c) {left = true, transpose = false} : (tensor<4x3xf32>, tensor<4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
