// RUN: %mlax-opt --mlax-exact-libm-calls %s | FileCheck %s

// expm1/log1p on scalars call libm (convert-math-to-llvm would compute exp(x) - 1);
// other math ops stay for convert-math-to-llvm (vectorizable intrinsics).
// CHECK-DAG:   func.func private @expm1f(f32) -> f32
// CHECK-DAG:   func.func private @log1p(f64) -> f64
// CHECK-LABEL: func.func @test_calls
// CHECK:         %[[E:.*]] = call @expm1f(%arg0) : (f32) -> f32
// CHECK:         %[[L:.*]] = call @log1p(%arg1) : (f64) -> f64
// CHECK:         %[[S:.*]] = math.sqrt %arg0 : f32
// CHECK:         return %[[E]], %[[L]], %[[S]]
func.func @test_calls(%x: f32, %y: f64) -> (f32, f64, f32) {
  %0 = math.expm1 %x : f32
  %1 = math.log1p %y : f64
  %2 = math.sqrt %x : f32
  return %0, %1, %2 : f32, f64, f32
}

// Vectors are left alone.
// CHECK-LABEL: func.func @test_vector
// CHECK:         math.expm1 %arg0 : vector<4xf32>
func.func @test_vector(%x: vector<4xf32>) -> vector<4xf32> {
  %0 = math.expm1 %x : vector<4xf32>
  return %0 : vector<4xf32>
}
