// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null

// argmax / argmin: one linalg.generic reducing `axis` into (value, index), from
// (-inf, 0). An element replaces the pair when it is better (ogt, or NaN over a number) or
// equal (oeq, or both NaN) at a lower index: the first index wins in any order.
// CHECK-DAG:   #[[$IN:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[$COL:.*]] = affine_map<(d0, d1) -> (d1)>

// CHECK-LABEL: func.func @test_argmax
// CHECK:         %[[NEG_INF:[-a-zA-Z0-9_]+]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[VALUES:[-a-zA-Z0-9_]+]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<3xf32>)
// CHECK:         %[[ZERO:[-a-zA-Z0-9_]+]] = arith.constant 0 : i32
// CHECK:         %[[INDICES:[-a-zA-Z0-9_]+]] = linalg.fill ins(%[[ZERO]] : i32) outs(%{{.*}} : tensor<3xi32>)
// CHECK:         %[[R:[-a-zA-Z0-9_]+]]:2 = linalg.generic {indexing_maps = [#[[$IN]], #[[$ROW]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:      outs(%[[VALUES]], %[[INDICES]] : tensor<3xf32>, tensor<3xi32>)
// CHECK:           ^bb0(%[[X:[-a-zA-Z0-9_]+]]: f32, %[[BEST:[-a-zA-Z0-9_]+]]: f32, %[[AT:[-a-zA-Z0-9_]+]]: i32):
// CHECK:           %[[I:[-a-zA-Z0-9_]+]] = arith.index_cast %{{.*}} : index to i32
// CHECK:           %[[X_NAN:[-a-zA-Z0-9_]+]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK:           arith.cmpf ogt, %[[X]], %[[BEST]] : f32
// CHECK:           arith.cmpf oeq, %[[X]], %[[BEST]] : f32
// CHECK:           arith.cmpi slt, %[[I]], %[[AT]] : i32
// CHECK:           %[[TAKE:[-a-zA-Z0-9_]+]] = arith.ori
// CHECK:           %[[V:[-a-zA-Z0-9_]+]] = arith.select %[[TAKE]], %[[X]], %[[BEST]] : f32
// CHECK:           %[[J:[-a-zA-Z0-9_]+]] = arith.select %[[TAKE]], %[[I]], %[[AT]] : i32
// CHECK:           linalg.yield %[[V]], %[[J]] : f32, i32
// CHECK:         return %[[R]]#1 : tensor<3xi32>
func.func @test_argmax(%x: tensor<3x5xf32>) -> tensor<3xi32> {
  %0 = "mlax.argmax"(%x) {axis = 1 : i64, index_dtype = i32} : (tensor<3x5xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// Booleans compare as i8 (an i1 buffer does not lower to LLVM), argmin starting from true.
// 200 indices do not fit i8's signed range: they count in i64 and wrap with one trunci.
// CHECK-LABEL: func.func @test_argmin_wide_axis
// CHECK:         %[[TRUE:[-a-zA-Z0-9_]+]] = arith.constant 1 : i8
// CHECK:         linalg.fill ins(%[[TRUE]] : i8)
// CHECK:         %[[R:[-a-zA-Z0-9_]+]]:2 = linalg.generic {indexing_maps = [#[[$IN]], #[[$COL]], #[[$COL]]], iterator_types = ["reduction", "parallel"]}
// CHECK:           arith.extui %{{.*}} : i1 to i8
// CHECK:           arith.cmpi slt, %{{.*}}, %{{.*}} : i8
// CHECK:           arith.cmpi slt, %{{.*}}, %{{.*}} : i64
// CHECK:         linalg.generic {{.*}} ins(%[[R]]#1 : tensor<2xi64>)
// CHECK:           arith.trunci %{{.*}} : i64 to i8
func.func @test_argmin_wide_axis(%x: tensor<200x2xi1>) -> tensor<2xi8> {
  %0 = "mlax.argmin"(%x) {axis = 0 : i64, index_dtype = i8} : (tensor<200x2xi1>) -> tensor<2xi8>
  return %0 : tensor<2xi8>
}

// Cumulative ops: scf.for loops over every dimension carrying the result, which starts as
// the identity (-0.0 for float sums); each element combines the result at the previous
// index along `axis` (clamped: the first index reads its own identity) with the operand.
// reverse visits the axis from n-1 down.
// CHECK-LABEL: func.func @test_cumsum_reverse
// CHECK-SAME:    (%[[X:[-a-zA-Z0-9_]+]]: tensor<3x5xf32>)
// CHECK:         %[[ONE:[-a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK:         %[[LAST:[-a-zA-Z0-9_]+]] = arith.constant 2 : index
// CHECK:         %[[NEG_ZERO:[-a-zA-Z0-9_]+]] = arith.constant -0.000000e+00 : f32
// CHECK:         %[[START:[-a-zA-Z0-9_]+]] = linalg.fill ins(%[[NEG_ZERO]] : f32) outs(%{{.*}} : tensor<3x5xf32>)
// CHECK:         %[[R:[-a-zA-Z0-9_]+]] = scf.for %[[K:[-a-zA-Z0-9_]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC0:[-a-zA-Z0-9_]+]] = %[[START]]) -> (tensor<3x5xf32>) {
// CHECK:           scf.for %[[J:[-a-zA-Z0-9_]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:[-a-zA-Z0-9_]+]] = %[[ACC0]]) -> (tensor<3x5xf32>) {
// CHECK:             %[[HERE:[-a-zA-Z0-9_]+]] = arith.subi %[[LAST]], %[[K]] : index
// CHECK:             %[[NEXT:[-a-zA-Z0-9_]+]] = arith.addi %[[HERE]], %[[ONE]] : index
// CHECK:             %[[BEFORE:[-a-zA-Z0-9_]+]] = arith.minsi %[[NEXT]], %[[LAST]] : index
// CHECK:             %[[PARTIAL:[-a-zA-Z0-9_]+]] = tensor.extract %[[ACC]][%[[BEFORE]], %[[J]]] : tensor<3x5xf32>
// CHECK:             %[[ELEMENT:[-a-zA-Z0-9_]+]] = tensor.extract %[[X]][%[[HERE]], %[[J]]] : tensor<3x5xf32>
// CHECK:             %[[SUM:[-a-zA-Z0-9_]+]] = arith.addf %[[PARTIAL]], %[[ELEMENT]] : f32
// CHECK:             %[[NEW:[-a-zA-Z0-9_]+]] = tensor.insert %[[SUM]] into %[[ACC]][%[[HERE]], %[[J]]] : tensor<3x5xf32>
// CHECK:             scf.yield %[[NEW]] : tensor<3x5xf32>
// CHECK:         return %[[R]] : tensor<3x5xf32>
func.func @test_cumsum_reverse(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = "mlax.cumsum"(%x) {axis = 0 : i64, reverse = 1 : i64} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// Forward: the previous index is max(k - 1, 0). cummin of unsigned integers is minui from all
// ones; cummax of floats is maximumf with equal operands merged bitwise (-0.0 < +0.0), from
// -inf, in the operand's own type (f16 rounds at every step, as the reference).
// CHECK-LABEL: func.func @test_cummin_cummax
// CHECK:         %[[ZERO:[-a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK:         %[[ALL_ONES:[-a-zA-Z0-9_]+]] = arith.constant -1 : i8
// CHECK:         linalg.fill ins(%[[ALL_ONES]] : i8)
// CHECK:         scf.for %[[K:[-a-zA-Z0-9_]+]] =
// CHECK:           %[[PREV:[-a-zA-Z0-9_]+]] = arith.subi %[[K]], %{{.*}} : index
// CHECK:           arith.maxsi %[[PREV]], %[[ZERO]] : index
// CHECK:           arith.minui %{{.*}}, %{{.*}} : i8
// CHECK:         arith.constant 0xFC00 : f16
// CHECK:         scf.for
// CHECK:           arith.maximumf %{{.*}}, %{{.*}} : f16
func.func @test_cummin_cummax(%x: tensor<4xui8>, %y: tensor<4xf16>) -> (tensor<4xui8>, tensor<4xf16>) {
  %0 = "mlax.cummin"(%x) {axis = 0 : i64, reverse = 0 : i64} : (tensor<4xui8>) -> tensor<4xui8>
  %1 = "mlax.cummax"(%y) {axis = 0 : i64, reverse = 0 : i64} : (tensor<4xf16>) -> tensor<4xf16>
  return %0, %1 : tensor<4xui8>, tensor<4xf16>
}

// A single element along the axis (or no element at all) is the operand.
// CHECK-LABEL: func.func @test_cumprod_trivial
// CHECK-NOT:     scf.for
// CHECK:         return %{{.*}}, %{{.*}} : tensor<1x3xi32>, tensor<0x3xi32>
func.func @test_cumprod_trivial(%x: tensor<1x3xi32>, %y: tensor<0x3xi32>) -> (tensor<1x3xi32>, tensor<0x3xi32>) {
  %0 = "mlax.cumprod"(%x) {axis = 0 : i64, reverse = 0 : i64} : (tensor<1x3xi32>) -> tensor<1x3xi32>
  %1 = "mlax.cumprod"(%y) {axis = 1 : i64, reverse = 1 : i64} : (tensor<0x3xi32>) -> tensor<0x3xi32>
  return %0, %1 : tensor<1x3xi32>, tensor<0x3xi32>
}
