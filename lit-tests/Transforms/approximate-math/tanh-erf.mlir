// RUN: %mlax-opt --mlax-approximate-math %s | FileCheck %s
// RUN: %mlax-opt --mlax-approximate-math %s | %mlir-opt > /dev/null

// tanh: |x| from the bits; x + x^3 P(x^2) below 0.625, else 1 - 2 / (exp(2 |x|) + 1) with |x|
// clamped to 10; both are computed and selected, the sign bit of x is put back (tanh(-0) = -0),
// NaN selected last.
// CHECK-LABEL: func.func @test_tanh
// CHECK-NOT:     math.tanh
// CHECK:         %[[XB:.*]] = arith.bitcast %arg0 : f32 to i32
// CHECK:         %[[ABSMASK:.*]] = arith.constant 2147483647 : i32
// CHECK:         %[[AB:.*]] = arith.andi %[[XB]], %[[ABSMASK]] : i32
// CHECK:         %[[A:.*]] = arith.bitcast %[[AB]] : i32 to f32
// CHECK:         %[[TEN:.*]] = arith.constant 1.000000e+01 : f32
// CHECK:         arith.cmpf olt, %[[A]], %[[TEN]] : f32
// CHECK:         %[[A2:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK:         arith.constant 0.00214296137 : f32
// CHECK:         arith.constant -0.333333313 : f32
// CHECK:         %[[SMALL:.*]] = arith.addf %[[A]], %{{.*}} : f32
// CHECK:         arith.fptosi
// CHECK:         %[[Q:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    %[[BIG:.*]] = arith.subf %{{.*}}, %[[Q]] : f32
// CHECK:         %[[THRESHOLD:.*]] = arith.constant 6.250000e-01 : f32
// CHECK:         %[[ISSMALL:.*]] = arith.cmpf olt, %[[A]], %[[THRESHOLD]] : f32
// CHECK:         %[[T:.*]] = arith.select %[[ISSMALL]], %[[SMALL]], %[[BIG]] : f32
// CHECK:         %[[XB2:.*]] = arith.bitcast %arg0 : f32 to i32
// CHECK:         %[[SIGNMASK:.*]] = arith.constant -2147483648 : i32
// CHECK:         %[[SIGN:.*]] = arith.andi %[[XB2]], %[[SIGNMASK]] : i32
// CHECK:         %[[TB:.*]] = arith.bitcast %[[T]] : f32 to i32
// CHECK:         %[[SIGNED:.*]] = arith.ori %[[TB]], %[[SIGN]] : i32
// CHECK:         %[[Y:.*]] = arith.bitcast %[[SIGNED]] : i32 to f32
// CHECK:         %[[NAN:.*]] = arith.cmpf uno, %arg0, %arg0 : f32
// CHECK:         %[[RES:.*]] = arith.select %[[NAN]], %arg0, %[[Y]] : f32
// CHECK:         return %[[RES]] : f32
func.func @test_tanh(%x: f32) -> f32 {
  %0 = math.tanh %x : f32
  return %0 : f32
}

// erf: |x| clamped to [0, 4]; x + x Q(x^2) below 1, else 1 - exp(-x^2) C(|x| - 2.5); sign put
// back, NaN selected last.
// CHECK-LABEL: func.func @test_erf
// CHECK-NOT:     math.erf
// CHECK:         %[[FOUR:.*]] = arith.constant 4.000000e+00 : f32
// CHECK:         %[[A2:.*]] = arith.mulf %[[A:.*]], %[[A]] : f32
// CHECK:         arith.constant 7.85401862E-5 : f32
// CHECK:         arith.constant 0.128379166 : f32
// CHECK:         %[[SMALL:.*]] = arith.addf %[[A]], %{{.*}} : f32
// CHECK:         %[[NEGA2:.*]] = arith.subf %{{.*}}, %[[A2]] : f32
// CHECK:         arith.mulf %[[NEGA2]], %{{.*}} : f32
// CHECK:         %[[MID:.*]] = arith.constant 2.500000e+00 : f32
// CHECK:         %[[T:.*]] = arith.subf %[[A]], %[[MID]] : f32
// CHECK:         arith.constant -2.79947017E-5 : f32
// CHECK:         %[[C0:.*]] = arith.constant 0.21080634 : f32
// CHECK-NEXT:    %[[C:.*]] = arith.addf %{{.*}}, %[[C0]] : f32
// CHECK-NEXT:    %[[ERFC:.*]] = arith.mulf %{{.*}}, %[[C]] : f32
// CHECK:         %[[ISSMALL:.*]] = arith.cmpf olt, %[[A]], %[[ONE:.*]] : f32
// CHECK:         %[[BIG:.*]] = arith.subf %[[ONE]], %[[ERFC]] : f32
// CHECK:         arith.select %[[ISSMALL]], %[[SMALL]], %[[BIG]] : f32
// CHECK:         arith.ori
// CHECK:         arith.cmpf uno, %arg0, %arg0 : f32
func.func @test_erf(%x: f32) -> f32 {
  %0 = math.erf %x : f32
  return %0 : f32
}
