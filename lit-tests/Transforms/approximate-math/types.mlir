// RUN: %mlax-opt --mlax-approximate-math %s | FileCheck %s
// RUN: %mlax-opt --mlax-approximate-math %s | %mlir-opt > /dev/null

// Vectors and tensors of f32: constants become splats of the operand's type, and the integer
// steps work on i32 of the same shape.
// CHECK-LABEL: func.func @test_vector
// CHECK-NOT:     math.
// CHECK:         arith.constant dense<8.900000e+01> : vector<4x8xf32>
// CHECK:         arith.select %{{.*}}, %arg0, %{{.*}} : vector<4x8xi1>, vector<4x8xf32>
// CHECK:         arith.fptosi %{{.*}} : vector<4x8xf32> to vector<4x8xi32>
// CHECK:         arith.constant dense<127> : vector<4x8xi32>
// CHECK:         arith.bitcast %{{.*}} : vector<4x8xi32> to vector<4x8xf32>
// CHECK:         arith.constant dense<0x4B800000> : vector<4x8xf32>
// CHECK:         return
func.func @test_vector(%x: vector<4x8xf32>) -> (vector<4x8xf32>, vector<4x8xf32>) {
  %0 = math.exp %x : vector<4x8xf32>
  %1 = math.log %x : vector<4x8xf32>
  return %0, %1 : vector<4x8xf32>, vector<4x8xf32>
}

// CHECK-LABEL: func.func @test_tensor
// CHECK-NOT:     math.
// CHECK:         arith.constant dense<1.000000e+01> : tensor<3xf32>
// CHECK:         arith.bitcast %{{.*}} : tensor<3xf32> to tensor<3xi32>
func.func @test_tensor(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = math.tanh %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// Inside a linalg.generic body (what mlax-lower-to-linalg produces), with fastmath flags.
// CHECK-LABEL: func.func @test_linalg_body
// CHECK:         linalg.generic
// CHECK-NOT:     math.erf
// CHECK:         arith.constant 4.000000e+00 : f32
// CHECK:         linalg.yield
func.func @test_linalg_body(%x: tensor<?xf32>, %out: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%out : tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %y = math.erf %a fastmath<afn> : f32
    linalg.yield %y : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// f64: the same algorithms with f64 constants (longer polynomials) and i64 bit twiddling.
// CHECK-LABEL: func.func @test_f64
// CHECK-NOT:     math.
// CHECK:         arith.constant 7.100000e+02 : f64
// CHECK:         arith.constant -7.460000e+02 : f64
// CHECK:         arith.constant 0x4338000000000000 : f64
// CHECK:         arith.constant 0.69314718036912382 : f64
// CHECK:         arith.constant 1.9082149292705877E-10 : f64
// CHECK:         arith.fptosi %{{.*}} : f64 to i64
// CHECK:         arith.constant 1023 : i64
// CHECK:         arith.constant 52 : i64
// CHECK:         arith.constant dense<4503599627370495> : vector<2xi64>
// CHECK:         arith.bitcast %{{.*}} : vector<2xi64> to vector<2xf64>
// CHECK:         return
func.func @test_f64(%a: f64, %b: vector<2xf64>) -> (f64, vector<2xf64>) {
  %0 = math.exp %a : f64
  %1 = math.log %b : vector<2xf64>
  return %0, %1 : f64, vector<2xf64>
}

// Left alone: f64 erf (no approximation yet), f16, bf16, math ops without a rule, and tensors
// of dynamic shape (no splat constant of that type).
// CHECK-LABEL: func.func @test_untouched
// CHECK-NEXT:    %[[E:.*]] = math.erf %arg0 : f64
// CHECK-NEXT:    %[[L:.*]] = math.log %arg1 : vector<2xf16>
// CHECK-NEXT:    %[[T:.*]] = math.tanh %arg2 : bf16
// CHECK-NEXT:    %[[S:.*]] = math.sin %arg3 : f32
// CHECK-NEXT:    %[[D:.*]] = math.exp %arg4 : tensor<?xf32>
// CHECK-NEXT:    return %[[E]], %[[L]], %[[T]], %[[S]], %[[D]]
func.func @test_untouched(%a: f64, %b: vector<2xf16>, %c: bf16, %d: f32, %t: tensor<?xf32>)
    -> (f64, vector<2xf16>, bf16, f32, tensor<?xf32>) {
  %0 = math.erf %a : f64
  %1 = math.log %b : vector<2xf16>
  %2 = math.tanh %c : bf16
  %3 = math.sin %d : f32
  %4 = math.exp %t : tensor<?xf32>
  return %0, %1, %2, %3, %4 : f64, vector<2xf16>, bf16, f32, tensor<?xf32>
}
