// RUN: %mlax-opt --mlax-partition --split-input-file %s | FileCheck %s

// broadcast_in_dim: the operand dimension keeps its sharding in the result, the new
// dimension is made at its local size (shape localized).
// CHECK-LABEL: func.func @test_broadcast_in_dim
// CHECK-SAME:    (%arg0: tensor<2xf32> {mlax.sharding = {{\[\[}}"y"]]}) -> (tensor<8x2xf32> {mlax.sharding = {{\[\[}}], ["y"]]})
// CHECK-NEXT:    %[[B:.*]] = "mlax.broadcast_in_dim"(%arg0) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 8, 2>} : (tensor<2xf32>) -> tensor<8x2xf32>
// CHECK-NEXT:    return %[[B]]
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_broadcast_in_dim(%a: tensor<4xf32> {mlax.sharding = [["y"]]}) -> tensor<8x4xf32> {
    %0 = "mlax.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 8, 4>} : (tensor<4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}

// -----

// reshape merging 8x4 -> 32: dimension 0 is the major part of the merge, so its sharding
// survives (local 4x4 -> 16).
// CHECK-LABEL: func.func @test_reshape_merge_keeps_major
// CHECK-SAME:    -> (tensor<16xf32> {mlax.sharding = {{\[\[}}"x"]]})
// CHECK-NEXT:    "mlax.reshape"(%arg0) {shape = array<i64: 16>} : (tensor<4x4xf32>) -> tensor<16xf32>
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_reshape_merge_keeps_major(%a: tensor<8x4xf32> {mlax.sharding = [["x"], []]}) -> tensor<32xf32> {
    %0 = "mlax.reshape"(%a) {shape = array<i64: 32>} : (tensor<8x4xf32>) -> tensor<32xf32>
    return %0 : tensor<32xf32>
  }
}

// -----

// A sharded minor part of a merge cannot stay sharded: the operand is gathered first.
// CHECK-LABEL: func.func @test_no_reshape_minor_sharding
// CHECK-SAME:    -> (tensor<32xf32> {mlax.sharding = {{\[\[}}]]})
// CHECK-NEXT:    %[[G:.*]] = "mlax.all_gather"(%arg0) {axes = ["y"], axis_size = 2 : i64, dimension = 1 : i64} : (tensor<8x2xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:    "mlax.reshape"(%[[G]]) {shape = array<i64: 32>} : (tensor<8x4xf32>) -> tensor<32xf32>
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_no_reshape_minor_sharding(%a: tensor<8x4xf32> {mlax.sharding = [[], ["y"]]}) -> tensor<32xf32> {
    %0 = "mlax.reshape"(%a) {shape = array<i64: 32>} : (tensor<8x4xf32>) -> tensor<32xf32>
    return %0 : tensor<32xf32>
  }
}

// -----

// reshape splitting 32 -> 2x16 over ("x", "y"): x goes to the first result dimension, y to
// the major part of the second.
// CHECK-LABEL: func.func @test_reshape_split_spreads_axes
// CHECK-SAME:    -> (tensor<1x8xf32> {mlax.sharding = {{\[\[}}"x"], ["y"]]})
// CHECK-NEXT:    "mlax.reshape"(%arg0) {shape = array<i64: 1, 8>} : (tensor<8xf32>) -> tensor<1x8xf32>
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_reshape_split_spreads_axes(%a: tensor<32xf32> {mlax.sharding = [["x", "y"]]}) -> tensor<2x16xf32> {
    %0 = "mlax.reshape"(%a) {shape = array<i64: 2, 16>} : (tensor<32xf32>) -> tensor<2x16xf32>
    return %0 : tensor<2x16xf32>
  }
}

// -----

// transpose permutes the sharding with the dimensions.
// CHECK-LABEL: func.func @test_transpose
// CHECK-SAME:    (%arg0: tensor<4x2x3xf32> {mlax.sharding = {{\[\[}}"x"], ["y"], []]}) -> (tensor<3x4x2xf32> {mlax.sharding = {{\[\[}}], ["x"], ["y"]]})
// CHECK-NEXT:    "mlax.transpose"(%arg0) {permutation = array<i64: 2, 0, 1>} : (tensor<4x2x3xf32>) -> tensor<3x4x2xf32>
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_transpose(%a: tensor<8x4x3xf32> {mlax.sharding = [["x"], ["y"], []]}) -> tensor<3x8x4xf32> {
    %0 = "mlax.transpose"(%a) {permutation = array<i64: 2, 0, 1>} : (tensor<8x4x3xf32>) -> tensor<3x8x4xf32>
    return %0 : tensor<3x8x4xf32>
  }
}
