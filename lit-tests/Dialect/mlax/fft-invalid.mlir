// RUN: %mlax-opt %s --split-input-file --verify-diagnostics

// fft's inference rejects what jax's fft_abstract_eval rejects (each a ValueError naming the op).
func.func @test_unknown_kind(%x: tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>> {
  // expected-error@+1 {{fft_type must be one of FFT, IFFT, RFFT, IRFFT, got 'DCT'}}
  %0 = "mlax.fft"(%x) {fft_lengths = array<i64: 8>, fft_type = "DCT"} : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
  return %0 : tensor<8xcomplex<f32>>
}

// -----

func.func @test_four_axes(%x: tensor<2x2x2x2xcomplex<f32>>) -> tensor<2x2x2x2xcomplex<f32>> {
  // expected-error@+1 {{fft_lengths must name 1 to 3 trailing axes, got (2, 2, 2, 2)}}
  %0 = "mlax.fft"(%x) {fft_lengths = array<i64: 2, 2, 2, 2>, fft_type = "FFT"} : (tensor<2x2x2x2xcomplex<f32>>) -> tensor<2x2x2x2xcomplex<f32>>
  return %0 : tensor<2x2x2x2xcomplex<f32>>
}

// -----

func.func @test_more_lengths_than_axes(%x: tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>> {
  // expected-error@+1 {{operand shape (8,) must have at least as many dimensions as fft_lengths (2, 8)}}
  %0 = "mlax.fft"(%x) {fft_lengths = array<i64: 2, 8>, fft_type = "FFT"} : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
  return %0 : tensor<8xcomplex<f32>>
}

// -----

func.func @test_fft_of_reals(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{FFT operand must be complex64 or complex128, got float32}}
  %0 = "mlax.fft"(%x) {fft_lengths = array<i64: 8>, fft_type = "FFT"} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @test_rfft_of_complex(%x: tensor<8xcomplex<f32>>) -> tensor<5xcomplex<f32>> {
  // expected-error@+1 {{RFFT operand must be f32 or f64, got complex64}}
  %0 = "mlax.fft"(%x) {fft_lengths = array<i64: 8>, fft_type = "RFFT"} : (tensor<8xcomplex<f32>>) -> tensor<5xcomplex<f32>>
  return %0 : tensor<5xcomplex<f32>>
}

// -----

func.func @test_lengths_not_the_shape(%x: tensor<4x8xcomplex<f32>>) -> tensor<4x8xcomplex<f32>> {
  // expected-error@+1 {{IFFT operand shape (4, 8) must end in fft_lengths (7,)}}
  %0 = "mlax.fft"(%x) {fft_lengths = array<i64: 7>, fft_type = "IFFT"} : (tensor<4x8xcomplex<f32>>) -> tensor<4x8xcomplex<f32>>
  return %0 : tensor<4x8xcomplex<f32>>
}

// -----

func.func @test_irfft_half_spectrum(%x: tensor<8xcomplex<f32>>) -> tensor<8xf32> {
  // expected-error@+1 {{IRFFT operand shape (8,) must end in (5,) (fft_lengths (8,), the last one n // 2 + 1)}}
  %0 = "mlax.fft"(%x) {fft_lengths = array<i64: 8>, fft_type = "IRFFT"} : (tensor<8xcomplex<f32>>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @test_zero_length(%x: tensor<0xcomplex<f32>>) -> tensor<0xcomplex<f32>> {
  // expected-error@+1 {{fft_lengths must be positive, got (0,)}}
  %0 = "mlax.fft"(%x) {fft_lengths = array<i64: 0>, fft_type = "FFT"} : (tensor<0xcomplex<f32>>) -> tensor<0xcomplex<f32>>
  return %0 : tensor<0xcomplex<f32>>
}
