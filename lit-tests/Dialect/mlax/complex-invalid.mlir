// RUN: %mlax-opt %s --split-input-file --verify-diagnostics

// Ops not yet taught complex numbers refuse them by name.
func.func @test_nextafter(%z: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  // expected-error@+1 {{mlax.nextafter does not support complex dtypes yet, got complex64}}
  %0 = "mlax.nextafter"(%z, %z) : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}

// -----

// Complex numbers are unordered: only EQ and NE compare them.
func.func @test_lt(%z: tensor<2xcomplex<f32>>) -> tensor<2xi1> {
  // expected-error@+1 {{comparison_direction LT does not accept complex operands}}
  %0 = "mlax.compare"(%z, %z) {comparison_direction = "LT"} : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @test_real_of_real(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'mlax.real' op operand must have complex element type, got float32}}
  %0 = "mlax.real"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
