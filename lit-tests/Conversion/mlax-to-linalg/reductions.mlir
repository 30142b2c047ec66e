// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null

// reduce_*: a linalg.generic with reduction iterators on `dimensions`, its output a
// linalg.fill of the identity. f16/bf16 accumulate in f32 and round once; booleans in i8.

// CHECK-DAG:   #[[$IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d1)>

// CHECK-LABEL: func.func @test_reduce_sum
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<3xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK-SAME:      outs(%[[INIT]] : tensor<3xf32>)
// A float sum may be reassociated (the order of a reduction is free): LLVM vectorizes it.
// CHECK:           arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
func.func @test_reduce_sum(%x: tensor<2x3x4xf32>) -> tensor<3xf32> {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// max of floats starts at -inf; maximumf propagates NaN and orders -0 < +0.
// CHECK-LABEL: func.func @test_reduce_max
// CHECK:         arith.constant 0xFF800000 : f32
// CHECK:         linalg.generic
// CHECK:           arith.maximumf
// CHECK:         arith.constant -2147483648 : i32
// CHECK:           arith.maxsi
func.func @test_reduce_max(%x: tensor<2x3xf32>, %i: tensor<2x3xi32>) -> (tensor<2xf32>, tensor<2xi32>) {
  %0 = "mlax.reduce_max"(%x) {dimensions = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  %1 = "mlax.reduce_max"(%i) {dimensions = array<i64: 1>} : (tensor<2x3xi32>) -> tensor<2xi32>
  return %0, %1 : tensor<2xf32>, tensor<2xi32>
}

// CHECK-LABEL: func.func @test_reduce_min_prod
// CHECK:         arith.constant 0x7F800000 : f32
// CHECK:           arith.minimumf
// CHECK:         arith.constant 1 : i32
// CHECK:           arith.muli
func.func @test_reduce_min_prod(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<f32>, tensor<i32>) {
  %0 = "mlax.reduce_min"(%x) {dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %1 = "mlax.reduce_prod"(%i) {dimensions = array<i64: 0>} : (tensor<4xi32>) -> tensor<i32>
  return %0, %1 : tensor<f32>, tensor<i32>
}

// Half floats: extf each element, accumulate in f32, one truncf at the end.
// CHECK-LABEL: func.func @test_reduce_sum_f16
// CHECK:         %[[ACC:.*]] = linalg.generic
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK:           arith.addf %{{.*}} : f32
// CHECK:         linalg.generic {{.*}} ins(%[[ACC]] : tensor<2xf32>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
func.func @test_reduce_sum_f16(%x: tensor<2x5xf16>) -> tensor<2xf16> {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 1>} : (tensor<2x5xf16>) -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

// Booleans accumulate in i8: and starts at all ones, or at 0.
// CHECK-LABEL: func.func @test_reduce_and_or
// CHECK:         arith.constant -1 : i8
// CHECK:           arith.extui %{{.*}} : i1 to i8
// CHECK:           arith.andi
// CHECK:           arith.trunci %{{.*}} : i8 to i1
// CHECK:         arith.constant 0 : i32
// CHECK:           arith.ori
func.func @test_reduce_and_or(%b: tensor<3x2xi1>, %i: tensor<3x2xi32>) -> (tensor<2xi1>, tensor<2xi32>) {
  %0 = "mlax.reduce_and"(%b) {dimensions = array<i64: 0>} : (tensor<3x2xi1>) -> tensor<2xi1>
  %1 = "mlax.reduce_or"(%i) {dimensions = array<i64: 0>} : (tensor<3x2xi32>) -> tensor<2xi32>
  return %0, %1 : tensor<2xi1>, tensor<2xi32>
}

// An empty `dimensions` is the operand itself.
// CHECK-LABEL: func.func @test_reduce_nothing
// CHECK-SAME:    (%[[X:.*]]: tensor<2xf32>)
// CHECK-NEXT:    return %[[X]]
func.func @test_reduce_nothing(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
