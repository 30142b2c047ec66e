// RUN: %mlax-opt --mlax-approximate-math %s | FileCheck %s
// RUN: %mlax-opt --mlax-approximate-math %s | %mlir-opt > /dev/null

// exp: clamp to [-104, 89] (NaN goes to 89), n = round(x log2e) with the 1.5 * 2^23 trick,
// r = x - n ln2 in two parts, 1 + (r + r^2 P(r)) with P a Taylor polynomial, then * 2^(n/2) * 2^(n - n/2)
// from exponent bits; NaN is selected back at the end.
// CHECK-LABEL: func.func @test_exp
// CHECK-NOT:     math.exp
// CHECK:         %[[HI:.*]] = arith.constant 8.900000e+01 : f32
// CHECK:         %[[LT:.*]] = arith.cmpf olt, %arg0, %[[HI]] : f32
// CHECK:         %[[X1:.*]] = arith.select %[[LT]], %arg0, %[[HI]] : f32
// CHECK:         %[[LO:.*]] = arith.constant -1.040000e+02 : f32
// CHECK:         %[[GT:.*]] = arith.cmpf ogt, %[[X1]], %[[LO]] : f32
// CHECK:         %[[X:.*]] = arith.select %[[GT]], %[[X1]], %[[LO]] : f32
// CHECK:         %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK:         %[[T:.*]] = arith.mulf %[[X]], %[[LOG2E]] : f32
// CHECK:         %[[MAGIC:.*]] = arith.constant 0x4B400000 : f32
// CHECK:         %[[T1:.*]] = arith.addf %[[T]], %[[MAGIC]] : f32
// CHECK:         %[[N:.*]] = arith.subf %[[T1]], %[[MAGIC]] : f32
// CHECK:         %[[LN2HI:.*]] = arith.constant 0.693145751 : f32
// CHECK:         %[[NHI:.*]] = arith.mulf %[[N]], %[[LN2HI]] : f32
// CHECK:         %[[R1:.*]] = arith.subf %[[X]], %[[NHI]] : f32
// CHECK:         %[[LN2LO:.*]] = arith.constant 1.42860677E-6 : f32
// CHECK:         %[[NLO:.*]] = arith.mulf %[[N]], %[[LN2LO]] : f32
// CHECK:         %[[R:.*]] = arith.subf %[[R1]], %[[NLO]] : f32
// CHECK:         %[[NI:.*]] = arith.fptosi %[[N]] : f32 to i32
// CHECK:         %[[R2:.*]] = arith.mulf %[[R]], %[[R]] : f32
// CHECK:         arith.constant 1.98412701E-4 : f32
// CHECK:         arith.constant 5.000000e-01 : f32
// CHECK:         %[[PR:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    %[[T:.*]] = arith.mulf %[[R2]], %[[PR]] : f32
// CHECK:         %[[Q:.*]] = arith.addf %[[R]], %[[T]] : f32
// CHECK-NEXT:    %[[P:.*]] = arith.addf %{{.*}}, %[[Q]] : f32
// CHECK:         %[[HALF:.*]] = arith.shrsi %[[NI]], %{{.*}} : i32
// CHECK:         %[[B1:.*]] = arith.addi %[[HALF]], %[[BIAS:.*]] : i32
// CHECK:         %[[S1:.*]] = arith.shli %[[B1]], %[[SHIFT:.*]] : i32
// CHECK:         %[[F1:.*]] = arith.bitcast %[[S1]] : i32 to f32
// CHECK:         %[[Y1:.*]] = arith.mulf %[[P]], %[[F1]] : f32
// CHECK:         %[[REST:.*]] = arith.subi %[[NI]], %[[HALF]] : i32
// CHECK:         %[[B2:.*]] = arith.addi %[[REST]], %[[BIAS]] : i32
// CHECK:         %[[S2:.*]] = arith.shli %[[B2]], %[[SHIFT]] : i32
// CHECK:         %[[F2:.*]] = arith.bitcast %[[S2]] : i32 to f32
// CHECK:         %[[Y:.*]] = arith.mulf %[[Y1]], %[[F2]] : f32
// CHECK:         %[[NAN:.*]] = arith.cmpf uno, %arg0, %arg0 : f32
// CHECK:         %[[RES:.*]] = arith.select %[[NAN]], %arg0, %[[Y]] : f32
// CHECK:         return %[[RES]] : f32
func.func @test_exp(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}

// expm1: the same reduction on x clamped to [-18, 89], then (r + t + (1 - 2^-min(n, 126))) * 2^n,
// or ((r + 1/2) + t) * 2 where n = 1 (no cancellation); x == +-0 returns x itself (keeps -0.0),
// then NaN.
// CHECK-LABEL: func.func @test_expm1
// CHECK-NOT:     math.expm1
// CHECK:         arith.constant -1.800000e+01 : f32
// CHECK:         %[[N:.*]] = arith.fptosi %{{.*}} : f32 to i32
// CHECK-NEXT:    %{{.*}} = arith.mulf %[[R:.*]], %[[R]] : f32
// CHECK:         %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:         %[[T:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK:         %[[CAP:.*]] = arith.constant 126 : i32
// CHECK:         %[[M:.*]] = arith.minsi %[[N]], %[[CAP]] : i32
// CHECK:         %[[NEG:.*]] = arith.subi %[[ZERO]], %[[M]] : i32
// CHECK:         %[[Q:.*]] = arith.addf %[[R]], %[[T]] : f32
// CHECK:         arith.bitcast %{{.*}} : i32 to f32
// CHECK:         %[[ONE_MINUS:.*]] = arith.subf %{{.*}}, %{{.*}} : f32
// CHECK:         %[[GENERAL:.*]] = arith.addf %[[Q]], %[[ONE_MINUS]] : f32
// CHECK:         %[[IS1:.*]] = arith.cmpi eq, %[[N]], %{{.*}} : i32
// CHECK:         %[[RH:.*]] = arith.addf %[[R]], %[[HALF]] : f32
// CHECK:         %[[SUM1:.*]] = arith.addf %[[RH]], %[[T]] : f32
// CHECK:         %[[SUM:.*]] = arith.select %[[IS1]], %[[SUM1]], %[[GENERAL]] : f32
// CHECK:         arith.mulf %[[SUM]], %{{.*}} : f32
// CHECK:         %[[IS0:.*]] = arith.cmpf oeq, %arg0, %{{.*}} : f32
// CHECK:         %[[Y:.*]] = arith.select %[[IS0]], %arg0, %{{.*}} : f32
// CHECK:         %[[NAN:.*]] = arith.cmpf uno, %arg0, %arg0 : f32
// CHECK:         %[[RES:.*]] = arith.select %[[NAN]], %arg0, %[[Y]] : f32
// CHECK:         return %[[RES]]
func.func @test_expm1(%x: f32) -> f32 {
  %0 = math.expm1 %x : f32
  return %0 : f32
}
