// RUN: %mlax-opt --mlax-partition --split-input-file %s | FileCheck %s

// An elementwise op runs on the blocks: the sharding of %a reaches the result, and the
// replicated %b is sliced locally to match (no communication).
// CHECK-LABEL: func.func @test_elementwise_slices_replicated_operand
// CHECK-SAME:    (%arg0: tensor<4x4xf32> {mlax.sharding = {{\[\[}}"x"], []]}, %arg1: tensor<8x4xf32> {mlax.sharding = {{\[\[}}], []]})
// CHECK-SAME:    -> (tensor<4x4xf32> {mlax.sharding = {{\[\[}}"x"], []]}) attributes {mlax.partitioned}
// CHECK:         %[[I:.*]] = "mlax.axis_index"() {axes = ["x"], axis_size = 2 : i64} : () -> tensor<i32>
// CHECK:         %[[OFF:.*]] = "mlax.mul"(%[[I]], %{{.*}}) : (tensor<i32>, tensor<i32>) -> tensor<i32>
// CHECK:         %[[B:.*]] = "mlax.dynamic_slice"(%arg1, %[[OFF]], %{{.*}}) {slice_sizes = array<i64: 4, 4>} : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<4x4xf32>
// CHECK:         %[[S:.*]] = "mlax.add"(%arg0, %[[B]]) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK:         %[[T:.*]] = "mlax.tanh"(%[[S]]) : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK:         return %[[T]]
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_elementwise_slices_replicated_operand(%a: tensor<8x4xf32> {mlax.sharding = [["x"], []]}, %b: tensor<8x4xf32>) -> tensor<8x4xf32> {
    %0 = "mlax.add"(%a, %b) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    %1 = "mlax.tanh"(%0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %1 : tensor<8x4xf32>
  }
}

// -----

// select with a scalar predicate, clamp with scalar bounds, compare and convert: rank-0
// operands stay whole, the rest follows the blocks of the 2-D mesh.
// CHECK-LABEL: func.func @test_elementwise_scalars_and_conversions
// CHECK-SAME:    -> (tensor<2x2xi32> {mlax.sharding = {{\[\[}}"x"], ["y"]]})
// CHECK-NOT:     all_gather
// CHECK:         "mlax.select"(%arg1, %arg0, %{{.*}}) : (tensor<i1>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK:         "mlax.clamp"(%arg2, %{{.*}}, %arg2) : (tensor<f32>, tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
// CHECK:         "mlax.compare"
// CHECK-SAME:      (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>
// CHECK:         "mlax.convert"
// CHECK-SAME:      (tensor<2x2xi1>) -> tensor<2x2xi32>
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_elementwise_scalars_and_conversions(%a: tensor<4x4xf32> {mlax.sharding = [["x"], ["y"]]}, %p: tensor<i1>, %s: tensor<f32>) -> tensor<4x4xi32> {
    %n = "mlax.neg"(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %0 = "mlax.select"(%p, %a, %n) : (tensor<i1>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %1 = "mlax.clamp"(%s, %0, %s) : (tensor<f32>, tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
    %2 = "mlax.compare"(%1, %a) {comparison_direction = "GT"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xi1>
    %3 = "mlax.convert"(%2) {new_dtype = i32} : (tensor<4x4xi1>) -> tensor<4x4xi32>
    return %3 : tensor<4x4xi32>
  }
}

// -----

// Without an mlax.mesh nothing changes: no local types, no mlax.partitioned.
// CHECK-LABEL: func.func @test_no_mesh_no_partitioning
// CHECK-SAME:    (%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {
// CHECK-NEXT:    "mlax.neg"(%arg0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
func.func @test_no_mesh_no_partitioning(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = "mlax.neg"(%a) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
