// RUN: %mlax-opt --mlax-partition --split-input-file %s | FileCheck %s

// Slicing along the unsharded dimension: each device slices its block (limits localized).
// CHECK-LABEL: func.func @test_slice_along_unsharded_dim
// CHECK-SAME:    -> (tensor<4x2xf32> {mlax.sharding = {{\[\[}}"x"], []]})
// CHECK-NEXT:    "mlax.slice"(%arg0) {limit_indices = array<i64: 4, 3>, start_indices = array<i64: 0, 1>, strides = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<4x2xf32>
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_slice_along_unsharded_dim(%a: tensor<8x4xf32> {mlax.sharding = [["x"], []]}) -> tensor<8x2xf32> {
    %0 = "mlax.slice"(%a) {start_indices = array<i64: 0, 1>, limit_indices = array<i64: 8, 3>, strides = array<i64: 1, 1>} : (tensor<8x4xf32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
}

// -----

// Slicing along the sharded dimension needs it whole: gather first.
// CHECK-LABEL: func.func @test_slice_along_sharded_dim_gathers
// CHECK-NEXT:    %[[G:.*]] = "mlax.all_gather"(%arg0) {axes = ["x"], axis_size = 2 : i64, dimension = 0 : i64} : (tensor<4x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:    "mlax.slice"(%[[G]]) {limit_indices = array<i64: 6, 4>, start_indices = array<i64: 2, 0>, strides = array<i64: 1, 1>} : (tensor<8x4xf32>) -> tensor<4x4xf32>
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_slice_along_sharded_dim_gathers(%a: tensor<8x4xf32> {mlax.sharding = [["x"], []]}) -> tensor<4x4xf32> {
    %0 = "mlax.slice"(%a) {start_indices = array<i64: 2, 0>, limit_indices = array<i64: 6, 4>, strides = array<i64: 1, 1>} : (tensor<8x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}

// -----

// concatenate, pad and rev along dimension 1 keep dimension 0 sharded; the replicated
// second operand of the concatenate is sliced to match.
// CHECK-LABEL: func.func @test_concatenate_pad_rev
// CHECK-NOT:     all_gather
// CHECK:         %[[B:.*]] = "mlax.dynamic_slice"(%arg1, {{.*}}) {slice_sizes = array<i64: 4, 2>}
// CHECK-NEXT:    "mlax.concatenate"(%arg0, %[[B]]) {dimension = 1 : i64} : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:    "mlax.pad"(%arg0, %arg2) {{.*}} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x7xf32>
// CHECK-NEXT:    "mlax.rev"(%arg0) {dimensions = array<i64: 1>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_concatenate_pad_rev(%a: tensor<8x4xf32> {mlax.sharding = [["x"], []]}, %b: tensor<8x2xf32>, %v: tensor<f32>) -> (tensor<8x6xf32>, tensor<8x7xf32>, tensor<8x4xf32>) {
    %0 = "mlax.concatenate"(%a, %b) {dimension = 1 : i64} : (tensor<8x4xf32>, tensor<8x2xf32>) -> tensor<8x6xf32>
    %1 = "mlax.pad"(%a, %v) {edge_padding_low = array<i64: 0, 1>, edge_padding_high = array<i64: 0, 2>, interior_padding = array<i64: 0, 0>} : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x7xf32>
    %2 = "mlax.rev"(%a) {dimensions = array<i64: 1>} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %0, %1, %2 : tensor<8x6xf32>, tensor<8x7xf32>, tensor<8x4xf32>
  }
}

// -----

// A dynamic slice and update along dimension 1: dimension 0 (taken whole) stays sharded
// and its slice size is localized.
// CHECK-LABEL: func.func @test_dynamic_slice_and_update
// CHECK:         "mlax.dynamic_slice"(%arg0, %{{.*}}, %arg2) {slice_sizes = array<i64: 4, 3>} : (tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
// CHECK:         "mlax.dynamic_update_slice"(%arg0, %{{.*}}, %{{.*}}, %arg2) : (tensor<4x4xf32>, tensor<4x2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x4xf32>
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_dynamic_slice_and_update(%a: tensor<8x4xf32> {mlax.sharding = [["x"], []]}, %u: tensor<8x2xf32>, %i: tensor<i32>) -> (tensor<8x3xf32>, tensor<8x4xf32>) {
    %z = "mlax.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %0 = "mlax.dynamic_slice"(%a, %z, %i) {slice_sizes = array<i64: 8, 3>} : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<8x3xf32>
    %1 = "mlax.dynamic_update_slice"(%a, %u, %z, %i) : (tensor<8x4xf32>, tensor<8x2xf32>, tensor<i32>, tensor<i32>) -> tensor<8x4xf32>
    return %0, %1 : tensor<8x3xf32>, tensor<8x4xf32>
  }
}

// -----

// Cumulative ops, sorts and top_k along the unsharded dimension run on the blocks; a
// cumsum along the sharded one gathers first.
// CHECK-LABEL: func.func @test_cumsum_sort_top_k
// CHECK-NEXT:    "mlax.cumsum"(%arg0) {axis = 1 : i64, reverse = 0 : i64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT:    "mlax.sort_permutation"(%arg0) {dimension = 1 : i64} : (tensor<4x4xf32>) -> tensor<4x4xi32>
// CHECK-NEXT:    "mlax.top_k"(%arg0) {k = 2 : i64} : (tensor<4x4xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)
// CHECK-NEXT:    %[[G:.*]] = "mlax.all_gather"(%arg0)
// CHECK-NEXT:    "mlax.cumsum"(%[[G]]) {axis = 0 : i64, reverse = 0 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_cumsum_sort_top_k(%a: tensor<8x4xf32> {mlax.sharding = [["x"], []]}) -> (tensor<8x4xf32>, tensor<8x4xi32>, tensor<8x2xf32>, tensor<8x4xf32>) {
    %0 = "mlax.cumsum"(%a) {axis = 1 : i64, reverse = 0 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %1 = "mlax.sort_permutation"(%a) {dimension = 1 : i64} : (tensor<8x4xf32>) -> tensor<8x4xi32>
    %2:2 = "mlax.top_k"(%a) {k = 2 : i64} : (tensor<8x4xf32>) -> (tensor<8x2xf32>, tensor<8x2xi32>)
    %3 = "mlax.cumsum"(%a) {axis = 0 : i64, reverse = 0 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %0, %1, %2#0, %3 : tensor<8x4xf32>, tensor<8x4xi32>, tensor<8x2xf32>, tensor<8x4xf32>
  }
}
