// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null

// erf_inv, nextafter and integer pow: one linalg.generic each, several steps in the body.

// erf_inv (XLA's, after Giles): w = -log1p(-x*x); w < 5 picks w - 2.5 and the first set of
// coefficients, else sqrt(w) - 3 and the second; Horner with fused multiply-adds (as XLA's
// CPU backend); p * x, except +-inf at |x| = 1.
// CHECK-LABEL: func.func @test_erf_inv_f32
// CHECK:         ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK:           %[[NEG:.*]] = arith.negf %[[SQ]]
// CHECK:           %[[L:.*]] = math.log1p %[[NEG]]
// CHECK:           %[[W:.*]] = arith.negf %[[L]]
// CHECK:           %[[LT:.*]] = arith.cmpf olt, %[[W]], %{{.*}} : f32
// CHECK:           %[[ROOT:.*]] = math.sqrt %[[W]]
// CHECK:           %[[A:.*]] = arith.subf %[[W]], %{{.*}}
// CHECK:           %[[B:.*]] = arith.subf %[[ROOT]], %{{.*}}
// CHECK:           %[[ARG:.*]] = arith.select %[[LT]], %[[A]], %[[B]]
// CHECK-COUNT-8:   math.fma %{{.*}}, %[[ARG]], %{{.*}} : f32
// CHECK:           %[[ONE:.*]] = arith.cmpf oeq
// CHECK:           %[[INF:.*]] = arith.mulf %[[X]], %cst{{.*}}
// CHECK:           %[[P:.*]] = arith.mulf %{{.*}}, %[[X]]
// CHECK:           arith.select %[[ONE]], %[[INF]], %[[P]]
func.func @test_erf_inv_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "mlax.erf_inv"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// f64 uses the double-precision polynomials (w < 6.25, w < 16, else: 23, 19 and 17
// coefficients); f16 computes in f32 and rounds once.
// CHECK-LABEL: func.func @test_erf_inv_f64_f16
// CHECK:           arith.cmpf olt, %{{.*}}, %{{.*}} : f64
// CHECK:           arith.cmpf olt, %{{.*}}, %{{.*}} : f64
// CHECK-COUNT-22:  arith.mulf %{{.*}}, %{{.*}} : f64
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK:           math.log1p %{{.*}} : f32
// CHECK:           arith.truncf %{{.*}} : f32 to f16
func.func @test_erf_inv_f64_f16(%x: tensor<4xf64>, %h: tensor<4xf16>) -> (tensor<4xf64>, tensor<4xf16>) {
  %0 = "mlax.erf_inv"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  %1 = "mlax.erf_inv"(%h) : (tensor<4xf16>) -> tensor<4xf16>
  return %0, %1 : tensor<4xf64>, tensor<4xf16>
}

// nextafter steps the bits: +1 away from zero (same sign, |x| < |y|), else -1; from zero
// to the smallest subnormal of y's sign; x == y gives y; NaN gives NaN.
// CHECK-LABEL: func.func @test_nextafter
// CHECK:         ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[XB:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK:           %[[AWAY:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK:           %[[UP:.*]] = arith.addi %[[XB]], %c1_i32
// CHECK:           %[[DOWN:.*]] = arith.subi %[[XB]], %c1_i32
// CHECK:           arith.select %[[AWAY]], %[[UP]], %[[DOWN]]
// CHECK:           arith.cmpf oeq, %[[X]], %[[Y]]
// CHECK:           arith.cmpf uno, %[[X]], %[[Y]]
func.func @test_nextafter(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "mlax.nextafter"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Integer pow: square-and-multiply in an scf.for over the 7 value bits of a non-negative
// i8 exponent; a negative exponent gives 1, +-1 or 0 by base (and parity).
// CHECK-LABEL: func.func @test_pow_int
// CHECK:           %[[NEG:.*]] = arith.cmpi slt, %[[Y:.*]], %c0_i8
// CHECK:           %[[E:.*]] = arith.select %[[NEG]], %{{.*}}, %[[Y]]
// CHECK:           %[[R:.*]]:3 = scf.for %{{.*}} = %c0 to %c7 step %c1 iter_args(%[[ACC:.*]] = %c1_i8, %[[BASE:.*]] = %{{.*}}, %[[EXP:.*]] = %[[E]])
// CHECK:             %[[PRODUCT:.*]] = arith.muli %[[ACC]], %[[BASE]]
// CHECK:             arith.select %{{.*}}, %[[PRODUCT]], %[[ACC]]
// CHECK:             arith.muli %[[BASE]], %[[BASE]]
// CHECK:             arith.shrui %[[EXP]]
// CHECK:           arith.select %[[NEG]], %{{.*}}, %[[R]]#0
// CHECK-LABEL: func.func @test_pow_float
// CHECK:           math.powf
func.func @test_pow_int(%x: tensor<4xi8>, %y: tensor<4xi8>) -> tensor<4xi8> {
  %0 = "mlax.pow"(%x, %y) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}
func.func @test_pow_float(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "mlax.pow"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
