// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null

// Complex values stay complex<fN> in linalg.generic bodies, computed by the complex dialect
// (the CPU pipeline expands it later); a complex constant is built from its parts.

// CHECK-LABEL: func.func @test_parts
// CHECK:         complex.create %{{.*}}, %{{.*}} : complex<f32>
// CHECK:         complex.conj %{{.*}} : complex<f32>
// CHECK:         complex.re %{{.*}} : complex<f32>
// CHECK:         complex.im %{{.*}} : complex<f32>
// CHECK-NOT:     mlax.
func.func @test_parts(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = "mlax.complex"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xcomplex<f32>>
  %1 = "mlax.conj"(%0) : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
  %2 = "mlax.real"(%1) : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
  %3 = "mlax.imag"(%1) : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
  return %2, %3 : tensor<3xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @test_math
// CHECK:         complex.mul %{{.*}}, %{{.*}} : complex<f64>
// CHECK:         complex.exp %{{.*}} : complex<f64>
// CHECK:         complex.div %{{.*}}, %{{.*}} : complex<f64>
// CHECK:         complex.abs %{{.*}} : complex<f64>
// CHECK:         complex.eq %{{.*}}, %{{.*}} : complex<f64>
// CHECK-NOT:     mlax.
func.func @test_math(%z: tensor<2xcomplex<f64>>) -> (tensor<2xf64>, tensor<2xi1>) {
  %0 = "mlax.mul"(%z, %z) : (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>>
  %1 = "mlax.exp"(%0) : (tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>>
  %2 = "mlax.div"(%1, %z) : (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>>
  %3 = "mlax.abs"(%2) : (tensor<2xcomplex<f64>>) -> tensor<2xf64>
  %4 = "mlax.compare"(%2, %z) {comparison_direction = "EQ"} : (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) -> tensor<2xi1>
  return %3, %4 : tensor<2xf64>, tensor<2xi1>
}

// CHECK-LABEL: func.func @test_constant_and_sum
// CHECK:         complex.constant [1.500000e+00 : f32, -2.000000e+00 : f32] : complex<f32>
// CHECK:         complex.add %{{.*}}, %{{.*}} : complex<f32>
// CHECK-NOT:     mlax.
func.func @test_constant_and_sum(%z: tensor<2x3xcomplex<f32>>) -> tensor<3xcomplex<f32>> {
  %0 = "mlax.constant"() {value = dense<(1.5, -2.0)> : tensor<2x3xcomplex<f32>>} : () -> tensor<2x3xcomplex<f32>>
  %1 = "mlax.mul"(%z, %0) : (tensor<2x3xcomplex<f32>>, tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>>
  %2 = "mlax.reduce_sum"(%1) {dimensions = array<i64: 0>} : (tensor<2x3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
  return %2 : tensor<3xcomplex<f32>>
}

// CHECK-LABEL: func.func @test_convert
// CHECK:         complex.re %{{.*}} : complex<f32>
// CHECK:         complex.create %{{.*}}, %{{.*}} : complex<f64>
func.func @test_convert(%z: tensor<2xcomplex<f32>>) -> (tensor<2xf32>, tensor<2xcomplex<f64>>) {
  %0 = "mlax.convert"(%z) {new_dtype = f32} : (tensor<2xcomplex<f32>>) -> tensor<2xf32>
  %1 = "mlax.convert"(%0) {new_dtype = complex<f64>} : (tensor<2xf32>) -> tensor<2xcomplex<f64>>
  return %0, %1 : tensor<2xf32>, tensor<2xcomplex<f64>>
}

// Complex sin is JAX's form on the parts (sinh/cosh of the imaginary part from expm1, a zero
// real part where the operand's is 0); max is lexicographic, (real, imag); reduce_min starts
// from +inf + 0i and picks lexicographically too; pow and tanh are the complex dialect's.
// CHECK-LABEL: func.func @test_transcendental
// CHECK:         %[[RE:.*]] = complex.re %{{.*}} : complex<f32>
// CHECK:         %[[IM:.*]] = complex.im %{{.*}} : complex<f32>
// CHECK:         math.sin %[[RE]] : f32
// CHECK:         math.cos %[[RE]] : f32
// CHECK:         math.expm1 %[[IM]] : f32
// CHECK:         complex.create
// CHECK:         %[[RX:.*]] = complex.re %[[X:.*]] : complex<f32>
// CHECK:         %[[RY:.*]] = complex.re %[[Y:.*]] : complex<f32>
// CHECK:         %[[EQ:.*]] = arith.cmpf oeq, %[[RX]], %[[RY]] : f32
// CHECK:         %[[IGT:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK:         %[[RGT:.*]] = arith.cmpf ogt, %[[RX]], %[[RY]] : f32
// CHECK:         %[[PICK:.*]] = arith.select %[[EQ]], %[[IGT]], %[[RGT]] : i1
// CHECK:         arith.select %[[PICK]], %[[X]], %[[Y]] : complex<f32>
// CHECK:         complex.constant [0x7F800000 : f32, 0.000000e+00 : f32] : complex<f32>
// CHECK:         iterator_types = ["reduction"]
// CHECK:         arith.cmpf olt
// CHECK:         complex.pow %{{.*}}, %{{.*}} : complex<f32>
// CHECK:         complex.tanh %{{.*}} : complex<f32>
// CHECK-NOT:     mlax.
func.func @test_transcendental(%z: tensor<2xcomplex<f32>>, %w: tensor<2xcomplex<f32>>)
    -> (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>, tensor<complex<f32>>, tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) {
  %0 = "mlax.sin"(%z) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  %1 = "mlax.max"(%z, %w) : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  %2 = "mlax.reduce_min"(%w) {dimensions = array<i64: 0>} : (tensor<2xcomplex<f32>>) -> tensor<complex<f32>>
  %3 = "mlax.pow"(%z, %w) : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  %4 = "mlax.tanh"(%z) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  return %0, %1, %2, %3, %4 : tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>, tensor<complex<f32>>, tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>
}
