// RUN: %mlax-roundtrip | FileCheck %s
// RUN: %mlir-opt --irdl-file=%irdl %s | %mlir-opt --irdl-file=%irdl | FileCheck %s

// complex<f32> / complex<f64> element types round-trip through the arithmetic ops that take them
// (the complex, real, imag and conj ops are in roundtrip.mlir).

// CHECK-LABEL: func.func @test_complex128_arithmetic(
// CHECK-NEXT:    %[[K:.*]] = "mlax.constant"() {value = dense<(1.500000e+00,-2.000000e+00)> : tensor<2xcomplex<f64>>}
// CHECK-NEXT:    %[[M:.*]] = "mlax.mul"(%{{.*}}, %[[K]]) : (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>>
// CHECK-NEXT:    %{{.*}} = "mlax.abs"(%[[M]]) : (tensor<2xcomplex<f64>>) -> tensor<2xf64>
func.func @test_complex128_arithmetic(%z: tensor<2xcomplex<f64>>) -> tensor<2xf64> {
  %0 = "mlax.constant"() {value = dense<(1.5, -2.0)> : tensor<2xcomplex<f64>>} : () -> tensor<2xcomplex<f64>>
  %1 = "mlax.mul"(%z, %0) : (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>>
  %2 = "mlax.abs"(%1) : (tensor<2xcomplex<f64>>) -> tensor<2xf64>
  return %2 : tensor<2xf64>
}

// The transcendental, ordering (lexicographic) and reduction ops that take complex operands.
// CHECK-LABEL: func.func @test_complex_math(
// CHECK-NEXT:    %[[S:.*]] = "mlax.sin"(%{{.*}}) : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
// CHECK-NEXT:    %[[P:.*]] = "mlax.pow"(%[[S]], %{{.*}}) : (tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
// CHECK-NEXT:    %[[M:.*]] = "mlax.max"(%[[P]], %{{.*}}) : (tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
// CHECK-NEXT:    %{{.*}} = "mlax.cumprod"(%[[M]]) {axis = 0 : i64, reverse = 0 : i64} : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
func.func @test_complex_math(%z: tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>> {
  %0 = "mlax.sin"(%z) : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
  %1 = "mlax.pow"(%0, %z) : (tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
  %2 = "mlax.max"(%1, %z) : (tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
  %3 = "mlax.cumprod"(%2) {axis = 0 : i64, reverse = 0 : i64} : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
  return %3 : tensor<3xcomplex<f32>>
}
