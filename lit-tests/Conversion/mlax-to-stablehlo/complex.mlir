// RUN: %mlax-opt --allow-unregistered-dialect --mlax-lower-to-stablehlo %s | FileCheck %s

// complex, real and imag are StableHLO's; conj is JAX's complex(real(x), -imag(x)); complex
// arithmetic keeps StableHLO's names; a complex -> real convert converts the real part.

// CHECK-LABEL: func.func @test_parts
// CHECK:         %[[Z:.*]] = "stablehlo.complex"(%{{.*}}, %{{.*}}) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xcomplex<f32>>
// CHECK:         %[[I:.*]] = "stablehlo.imag"(%[[Z]])
// CHECK:         %[[N:.*]] = "stablehlo.negate"(%[[I]])
// CHECK:         %[[R:.*]] = "stablehlo.real"(%[[Z]])
// CHECK:         "stablehlo.complex"(%[[R]], %[[N]])
func.func @test_parts(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xcomplex<f32>> {
  %0 = "mlax.complex"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xcomplex<f32>>
  %1 = "mlax.conj"(%0) : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
  return %1 : tensor<3xcomplex<f32>>
}

// CHECK-LABEL: func.func @test_math
// CHECK:         "stablehlo.multiply"(%{{.*}}, %{{.*}}) : (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>>
// CHECK:         "stablehlo.sqrt"
// CHECK:         "stablehlo.abs"(%{{.*}}) : (tensor<2xcomplex<f64>>) -> tensor<2xf64>
// CHECK:         "stablehlo.compare"{{.*}}compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>
// CHECK:         %[[RE:.*]] = "stablehlo.real"(%{{.*}}) : (tensor<2xcomplex<f64>>) -> tensor<2xf64>
// CHECK:         "stablehlo.convert"(%[[RE]]) : (tensor<2xf64>) -> tensor<2xf32>
func.func @test_math(%z: tensor<2xcomplex<f64>>) -> (tensor<2xf64>, tensor<2xi1>, tensor<2xf32>) {
  %0 = "mlax.mul"(%z, %z) : (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>>
  %1 = "mlax.sqrt"(%0) : (tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>>
  %2 = "mlax.abs"(%1) : (tensor<2xcomplex<f64>>) -> tensor<2xf64>
  %3 = "mlax.compare"(%1, %z) {comparison_direction = "NE"} : (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) -> tensor<2xi1>
  %4 = "mlax.convert"(%1) {new_dtype = f32} : (tensor<2xcomplex<f64>>) -> tensor<2xf32>
  return %2, %3, %4 : tensor<2xf64>, tensor<2xi1>, tensor<2xf32>
}

// Complex sin is JAX's lowering (lax._sin_complex: sinh/cosh of the imaginary part from
// expm1); max is mlir._minmax_hlo's lexicographic select; reduce_min's body is the same
// select from +inf + 0i; pow stays stablehlo.power.
// CHECK-LABEL: func.func @test_transcendental
// CHECK:         %[[A:.*]] = "stablehlo.real"(%arg0)
// CHECK:         %[[B:.*]] = "stablehlo.imag"(%arg0)
// CHECK:         "stablehlo.sine"(%[[A]])
// CHECK:         "stablehlo.exponential_minus_one"(%[[B]])
// CHECK:         "stablehlo.complex"
// CHECK:         %[[EQ:.*]] = "stablehlo.compare"(%{{.*}}, %{{.*}}) {{.*}}comparison_direction EQ
// CHECK:         %[[IGT:.*]] = "stablehlo.compare"(%{{.*}}, %{{.*}}) {{.*}}comparison_direction GT
// CHECK:         %[[RGT:.*]] = "stablehlo.compare"(%{{.*}}, %{{.*}}) {{.*}}comparison_direction GT
// CHECK:         %[[PICK:.*]] = "stablehlo.select"(%[[EQ]], %[[IGT]], %[[RGT]])
// CHECK:         "stablehlo.select"(%[[PICK]], %arg0, %arg1) : (tensor<2xi1>, tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>)
// CHECK:         "stablehlo.constant"() {value = dense<(0x7F800000,0.000000e+00)> : tensor<complex<f32>>}
// CHECK:         "stablehlo.reduce"
// CHECK:           comparison_direction LT
// CHECK:         "stablehlo.power"(%arg0, %arg1) : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>)
func.func @test_transcendental(%z: tensor<2xcomplex<f32>>, %w: tensor<2xcomplex<f32>>)
    -> (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>, tensor<complex<f32>>, tensor<2xcomplex<f32>>) {
  %0 = "mlax.sin"(%z) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  %1 = "mlax.max"(%z, %w) : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  %2 = "mlax.reduce_min"(%w) {dimensions = array<i64: 0>} : (tensor<2xcomplex<f32>>) -> tensor<complex<f32>>
  %3 = "mlax.pow"(%z, %w) : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  return %0, %1, %2, %3 : tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>, tensor<complex<f32>>, tensor<2xcomplex<f32>>
}
