// RUN: %mlax-opt %s --allow-unregistered-dialect --mlax-lower-to-stablehlo | FileCheck %s
// RUN: %mlax-run %s --entry test_rfft --backend xla --precision 5 --input '[[1, 2, 0, -1, 3], [0.5, 0.5, 0.5, 0.5, 0.5]]' | FileCheck %s --check-prefix=RFFT

// fft is StableHLO's fft with the op's kind and lengths, as jax lowers lax.fft.
// CHECK-LABEL: func.func @test_rfft
// CHECK-NEXT:    %[[R:.*]] = "stablehlo.fft"(%arg0) {fft_length = array<i64: 5>, fft_type = #stablehlo<fft_type RFFT>} : (tensor<2x5xf32>) -> tensor<2x3xcomplex<f32>>
// CHECK-NEXT:    return %[[R]]
func.func @test_rfft(%x: tensor<2x5xf32>) -> tensor<2x3xcomplex<f32>> {
  %0 = "mlax.fft"(%x) {fft_lengths = array<i64: 5>, fft_type = "RFFT"} : (tensor<2x5xf32>) -> tensor<2x3xcomplex<f32>>
  return %0 : tensor<2x3xcomplex<f32>>
}
// numpy.fft.rfft of the same rows
// RFFT: result[0]: tensor<2x3xcomplex<f32>> = {{\[\[}}(5, 0), (3.3541, 0.36327), (-3.3541, 1.5388)], [(2.5, 0), (0, 0), (0, 0)]]

// CHECK-LABEL: func.func @test_ifft3
// CHECK-NEXT:    "stablehlo.fft"(%arg0) {fft_length = array<i64: 2, 3, 4>, fft_type = #stablehlo<fft_type IFFT>} : (tensor<2x3x4xcomplex<f64>>) -> tensor<2x3x4xcomplex<f64>>
func.func @test_ifft3(%x: tensor<2x3x4xcomplex<f64>>) -> tensor<2x3x4xcomplex<f64>> {
  %0 = "mlax.fft"(%x) {fft_lengths = array<i64: 2, 3, 4>, fft_type = "IFFT"} : (tensor<2x3x4xcomplex<f64>>) -> tensor<2x3x4xcomplex<f64>>
  return %0 : tensor<2x3x4xcomplex<f64>>
}
