// RUN: %mlax-roundtrip | FileCheck %s
// RUN: %mlir-opt --irdl-file=%irdl %s | %mlir-opt --irdl-file=%irdl | FileCheck %s

// The collectives round-trip in their tiled forms, over one axis and several; dimension
// attributes move the inferred shapes (all_gather multiplies, psum_scatter divides,
// all_to_all does both, equal split and concat dimensions keep the shape).

// CHECK-LABEL: func.func @test_all_reduce_several_axes
// CHECK-NEXT:    "mlax.psum"(%{{.*}}) {axes = ["x", "y"]} : (tensor<3xi32>) -> tensor<3xi32>
// CHECK-NEXT:    "mlax.pmax"(%{{.*}}) {axes = ["y"]} : (tensor<3xi32>) -> tensor<3xi32>
func.func @test_all_reduce_several_axes(%x: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>) {
  %0 = "mlax.psum"(%x) {axes = ["x", "y"]} : (tensor<3xi32>) -> tensor<3xi32>
  %1 = "mlax.pmax"(%x) {axes = ["y"]} : (tensor<3xi32>) -> tensor<3xi32>
  return %0, %1 : tensor<3xi32>, tensor<3xi32>
}

// CHECK-LABEL: func.func @test_shapes
// CHECK-NEXT:    "mlax.all_gather"(%{{.*}}) {axes = ["y", "x"], axis_size = 4 : i64, dimension = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x12xf32>
// CHECK-NEXT:    "mlax.psum_scatter"(%{{.*}}) {axes = ["x"], axis_size = 2 : i64, dimension = 0 : i64} : (tensor<2x3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:    "mlax.all_to_all"(%{{.*}}) {axes = ["x"], axis_size = 2 : i64, concat_dimension = 0 : i64, split_dimension = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @test_shapes(%x: tensor<2x3xf32>) -> (tensor<2x12xf32>, tensor<1x3xf32>, tensor<2x3xf32>) {
  %0 = "mlax.all_gather"(%x) {axes = ["y", "x"], dimension = 1 : i64, axis_size = 4 : i64} : (tensor<2x3xf32>) -> tensor<2x12xf32>
  %1 = "mlax.psum_scatter"(%x) {axes = ["x"], dimension = 0 : i64, axis_size = 2 : i64} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  %2 = "mlax.all_to_all"(%x) {axes = ["x"], split_dimension = 0 : i64, concat_dimension = 0 : i64, axis_size = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2 : tensor<2x12xf32>, tensor<1x3xf32>, tensor<2x3xf32>
}

// A partial permutation (the others receive zeros) and the index of an instance.
// CHECK-LABEL: func.func @test_ppermute_axis_index
// CHECK-NEXT:    "mlax.ppermute"(%{{.*}}) {axes = ["x"], pairs = array<i64: 0, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    "mlax.axis_index"() {axes = ["x"], axis_size = 4 : i64} : () -> tensor<i32>
func.func @test_ppermute_axis_index(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<i32>) {
  %0 = "mlax.ppermute"(%x) {axes = ["x"], pairs = array<i64: 0, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "mlax.axis_index"() {axes = ["x"], axis_size = 4 : i64} : () -> tensor<i32>
  return %0, %1 : tensor<2x3xf32>, tensor<i32>
}
