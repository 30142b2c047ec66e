// RUN: %mlax-opt --mlax-partition --split-input-file %s | FileCheck %s

// A constraint moving the split from dimension 0 to 1 is one all_to_all; a result asked for
// a finer split is sliced locally (the neg runs on the finer blocks); a replicated result of a
// sharded value is gathered. An unspecified result records the spec it has.
// CHECK-LABEL: func.func @test_constraint_reshards
// CHECK-SAME:    -> (tensor<8x2xf32> {mlax.sharding = {{\[\[}}], ["x"]]}, tensor<2x4xf32> {mlax.sharding = {{\[\[}}"x", "y"], []]}, tensor<8x4xf32> {mlax.sharding = {{\[\[}}], []]})
// CHECK-NOT:     sharding_constraint
// CHECK:         %[[T:.*]] = "mlax.all_to_all"(%arg0) {axes = ["x"], axis_size = 2 : i64, concat_dimension = 0 : i64, split_dimension = 1 : i64} : (tensor<4x4xf32>) -> tensor<8x2xf32>
// CHECK:         %[[Y:.*]] = "mlax.axis_index"() {axes = ["y"], axis_size = 2 : i64}
// CHECK:         %[[S:.*]] = "mlax.dynamic_slice"(%arg0, {{.*}}) {slice_sizes = array<i64: 2, 4>} : (tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[N:.*]] = "mlax.neg"(%[[S]]) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[G:.*]] = "mlax.all_gather"(%arg0) {axes = ["x"], axis_size = 2 : i64, dimension = 0 : i64}
// CHECK-NEXT:    return %[[T]], %[[N]], %[[G]]
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_constraint_reshards(%a: tensor<8x4xf32> {mlax.sharding = [["x"], []]}) -> (tensor<8x4xf32>, tensor<8x4xf32> {mlax.sharding = [["x", "y"], []]}, tensor<8x4xf32> {mlax.sharding = [[], []]}) {
    %0 = "mlax.sharding_constraint"(%a) {sharding = [[], ["x"]]} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %1 = "mlax.neg"(%a) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %0, %1, %a : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  }
}

// -----

// A constraint's spec propagates backward: the mul runs sharded, its replicated operands
// are sliced locally, and the result carries the constraint's spec.
// CHECK-LABEL: func.func @test_constraint_propagates_backward
// CHECK-SAME:    -> (tensor<4x2xf32> {mlax.sharding = {{\[\[}}"y"], ["x"]]})
// CHECK-NOT:     all_gather
// CHECK:         "mlax.mul"(%{{.*}}, %{{.*}}) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_constraint_propagates_backward(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>) -> tensor<8x4xf32> {
    %0 = "mlax.mul"(%a, %b) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    %1 = "mlax.sharding_constraint"(%0) {sharding = [["y"], ["x"]]} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %1 : tensor<8x4xf32>
  }
}
