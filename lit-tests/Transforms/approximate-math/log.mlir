// RUN: %mlax-opt --mlax-approximate-math %s | FileCheck %s
// RUN: %mlax-opt --mlax-approximate-math %s | %mlir-opt > /dev/null

// log: subnormals are scaled by 2^24 first; the exponent and a mantissa in [sqrt(1/2), sqrt(2))
// come from the bits; log(1 + f) = f - (hfsq - s (hfsq + R(s^2))) with s = f / (2 + f); then
// +inf -> +inf, +-0 -> -inf, x < 0 or NaN -> NaN.
// CHECK-LABEL: func.func @test_log
// CHECK-NOT:     math.log
// CHECK:         %[[TINY:.*]] = arith.constant 1.17549435E-38 : f32
// CHECK:         %[[SUB:.*]] = arith.cmpf olt, %arg0, %[[TINY]] : f32
// CHECK:         %[[SCALE:.*]] = arith.constant 0x4B800000 : f32
// CHECK:         %[[SCALED:.*]] = arith.mulf %arg0, %[[SCALE]] : f32
// CHECK:         %[[X:.*]] = arith.select %[[SUB]], %[[SCALED]], %arg0 : f32
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK:         %[[OFFSET:.*]] = arith.constant 4913933 : i32
// CHECK:         %[[REBASED:.*]] = arith.addi %[[BITS]], %[[OFFSET]] : i32
// CHECK:         arith.shrsi %[[REBASED]], %{{.*}} : i32
// CHECK:         %[[MANT:.*]] = arith.andi %[[REBASED]], %{{.*}} : i32
// CHECK:         %[[SQRTHALF:.*]] = arith.constant 1060439283 : i32
// CHECK:         %[[MBITS:.*]] = arith.addi %[[MANT]], %[[SQRTHALF]] : i32
// CHECK:         %[[M:.*]] = arith.bitcast %[[MBITS]] : i32 to f32
// CHECK:         %[[F:.*]] = arith.subf %[[M]], %{{.*}} : f32
// CHECK:         %[[DEN:.*]] = arith.addf %{{.*}}, %[[F]] : f32
// CHECK:         %[[S:.*]] = arith.divf %[[F]], %[[DEN]] : f32
// CHECK:         arith.constant 0.222222224 : f32
// CHECK:         arith.constant 0.666666686 : f32
// CHECK:         %[[K:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK:         arith.constant 1.42860677E-6 : f32
// CHECK:         %[[LN2HI:.*]] = arith.constant 0.693145751 : f32
// CHECK:         %[[KHI:.*]] = arith.mulf %[[K]], %[[LN2HI]] : f32
// CHECK:         %[[Y:.*]] = arith.subf %[[KHI]], %{{.*}} : f32
// CHECK:         %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK:         %[[ISINF:.*]] = arith.cmpf oeq, %arg0, %[[INF]] : f32
// CHECK:         %[[Y1:.*]] = arith.select %[[ISINF]], %arg0, %[[Y]] : f32
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[IS0:.*]] = arith.cmpf oeq, %arg0, %[[ZERO]] : f32
// CHECK:         %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[Y2:.*]] = arith.select %[[IS0]], %[[NINF]], %[[Y1]] : f32
// CHECK:         %[[NEG:.*]] = arith.cmpf ult, %arg0, %[[ZERO]] : f32
// CHECK:         %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK:         %[[RES:.*]] = arith.select %[[NEG]], %[[NAN]], %[[Y2]] : f32
// CHECK:         return %[[RES]] : f32
func.func @test_log(%x: f32) -> f32 {
  %0 = math.log %x : f32
  return %0 : f32
}

// log1p: u = 1 + x, c = the exact rounding error of that sum (Fast2Sum, operands ordered by
// magnitude), log1p(x) = log(u) + c / u; u == 1 gives x (tiny x, -0.0); the edge cases of log(u).
// CHECK-LABEL: func.func @test_log1p
// CHECK-NOT:     math.log1p
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         %[[U:.*]] = arith.addf %[[ONE]], %arg0 : f32
// CHECK:         %[[UX:.*]] = arith.subf %[[U]], %arg0 : f32
// CHECK:         %[[BIG:.*]] = arith.subf %[[ONE]], %[[UX]] : f32
// CHECK:         %[[U1:.*]] = arith.subf %[[U]], %[[ONE]] : f32
// CHECK:         %[[SMALL:.*]] = arith.subf %arg0, %[[U1]] : f32
// CHECK:         %[[GT1:.*]] = arith.cmpf ogt, %arg0, %[[ONE]] : f32
// CHECK:         %[[C:.*]] = arith.select %[[GT1]], %[[BIG]], %[[SMALL]] : f32
// CHECK:         arith.cmpf olt, %[[U]], %{{.*}} : f32
// CHECK:         %[[K:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK:         %[[LN2HI:.*]] = arith.constant 0.693145751 : f32
// CHECK:         %[[KHI:.*]] = arith.mulf %[[K]], %[[LN2HI]] : f32
// CHECK:         %[[LOGU:.*]] = arith.subf %[[KHI]], %{{.*}} : f32
// CHECK-NEXT:    %[[CORR:.*]] = arith.divf %[[C]], %[[U]] : f32
// CHECK-NEXT:    %[[Y:.*]] = arith.addf %[[LOGU]], %[[CORR]] : f32
// CHECK-NEXT:    %[[IS1:.*]] = arith.cmpf oeq, %[[U]], %[[ONE]] : f32
// CHECK-NEXT:    %[[Y1:.*]] = arith.select %[[IS1]], %arg0, %[[Y]] : f32
// CHECK:         arith.cmpf oeq, %[[U]], %{{.*}} : f32
// CHECK:         arith.cmpf oeq, %[[U]], %{{.*}} : f32
// CHECK:         arith.cmpf ult, %[[U]], %{{.*}} : f32
func.func @test_log1p(%x: f32) -> f32 {
  %0 = math.log1p %x : f32
  return %0 : f32
}
