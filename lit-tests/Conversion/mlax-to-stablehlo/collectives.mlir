// Collectives lower to StableHLO collectives with replica groups from the module's mesh
// {x: 2, y: 2}: partition id = 2 * x + y; a group holds the devices that agree off `axes`,
// ordered by the linear index over `axes` (first named axis major). Every collective has
// jax's channel handle 1 (type 1, device to device).
// RUN: %mlax-opt %s --mlax-lower-to-stablehlo | FileCheck %s

module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  // One all_reduce per tensor; its region combines two scalars.
  // CHECK-LABEL: func.func @test_all_reduce
  // CHECK: "stablehlo.all_reduce"(%arg0) ({
  // CHECK: "stablehlo.add"
  // CHECK: }) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<{{\[\[}}0, 1], [2, 3]]> : tensor<2x2xi64>, use_global_device_ids} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // CHECK: "stablehlo.all_reduce"(%arg0) ({
  // CHECK: "stablehlo.maximum"
  // CHECK: replica_groups = dense<{{\[\[}}0, 1, 2, 3]]> : tensor<1x4xi64>
  // CHECK: "stablehlo.all_reduce"(%arg0) ({
  // CHECK: "stablehlo.minimum"
  // CHECK: replica_groups = dense<{{\[\[}}0, 2], [1, 3]]> : tensor<2x2xi64>
  func.func @test_all_reduce(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
    %0 = "mlax.psum"(%a) {axes = ["y"]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %1 = "mlax.pmax"(%a) {axes = ["x", "y"]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %2 = "mlax.pmin"(%a) {axes = ["x"]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0, %1, %2 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
  }

  // Over ("y", "x") the group lists the devices y major: (x, y) = (0,0) (1,0) (0,1) (1,1).
  // CHECK-LABEL: func.func @test_gather_scatter
  // CHECK: "stablehlo.all_gather"(%arg0) {all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<{{\[\[}}0, 2, 1, 3]]> : tensor<1x4xi64>, use_global_device_ids} : (tensor<4x4xf32>) -> tensor<16x4xf32>
  // CHECK: "stablehlo.reduce_scatter"(%arg0) ({
  // CHECK: "stablehlo.add"
  // CHECK: }) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<{{\[\[}}0, 2], [1, 3]]> : tensor<2x2xi64>, scatter_dimension = 1 : i64, use_global_device_ids} : (tensor<4x4xf32>) -> tensor<4x2xf32>
  func.func @test_gather_scatter(%a: tensor<4x4xf32>) -> (tensor<16x4xf32>, tensor<4x2xf32>) {
    %0 = "mlax.all_gather"(%a) {axes = ["y", "x"], dimension = 0 : i64, axis_size = 4 : i64} : (tensor<4x4xf32>) -> tensor<16x4xf32>
    %1 = "mlax.psum_scatter"(%a) {axes = ["x"], dimension = 1 : i64, axis_size = 2 : i64} : (tensor<4x4xf32>) -> tensor<4x2xf32>
    return %0, %1 : tensor<16x4xf32>, tensor<4x2xf32>
  }

  // ppermute's pairs go through every group: over x, (0 -> 1) is device 0 -> 2 and 1 -> 3.
  // CHECK-LABEL: func.func @test_all_to_all_ppermute
  // CHECK: "stablehlo.all_to_all"(%arg0) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, concat_dimension = 0 : i64, replica_groups = dense<{{\[\[}}0, 1], [2, 3]]> : tensor<2x2xi64>, split_count = 2 : i64, split_dimension = 1 : i64} : (tensor<4x4xf32>) -> tensor<8x2xf32>
  // CHECK: "stablehlo.collective_permute"(%arg0) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<{{\[\[}}0, 2], [2, 0], [1, 3], [3, 1]]> : tensor<4x2xi64>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.func @test_all_to_all_ppermute(%a: tensor<4x4xf32>) -> (tensor<8x2xf32>, tensor<4x4xf32>) {
    %0 = "mlax.all_to_all"(%a) {axes = ["y"], split_dimension = 1 : i64, concat_dimension = 0 : i64, axis_size = 2 : i64} : (tensor<4x4xf32>) -> tensor<8x2xf32>
    %1 = "mlax.ppermute"(%a) {axes = ["x"], pairs = array<i64: 0, 1, 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0, %1 : tensor<8x2xf32>, tensor<4x4xf32>
  }

  // axis_index(("y", "x")) = y * 2 + x, with y = (id / 1) % 2 and x = (id / 2) % 2.
  // CHECK-LABEL: func.func @test_axis_index
  // CHECK: %[[ID:.*]] = "stablehlo.partition_id"() : () -> tensor<ui32>
  // CHECK: %[[DEV:.*]] = "stablehlo.convert"(%[[ID]]) : (tensor<ui32>) -> tensor<i32>
  // CHECK: %[[ONE:.*]] = "stablehlo.constant"() {value = dense<1> : tensor<i32>}
  // CHECK: %[[Q:.*]] = "stablehlo.divide"(%[[DEV]], %[[ONE]])
  // CHECK: %[[Y:.*]] = "stablehlo.remainder"(%[[Q]],
  // CHECK: %[[TWO:.*]] = "stablehlo.constant"() {value = dense<2> : tensor<i32>}
  // CHECK: %[[Q2:.*]] = "stablehlo.divide"(%[[DEV]], %[[TWO]])
  // CHECK: %[[X:.*]] = "stablehlo.remainder"(%[[Q2]],
  // CHECK: %[[YS:.*]] = "stablehlo.multiply"(%[[Y]],
  // CHECK: %[[R:.*]] = "stablehlo.add"(%[[YS]], %[[X]])
  // CHECK: return %[[R]]
  func.func @test_axis_index() -> tensor<i32> {
    %0 = "mlax.axis_index"() {axes = ["y", "x"], axis_size = 4 : i64} : () -> tensor<i32>
    return %0 : tensor<i32>
  }
}
