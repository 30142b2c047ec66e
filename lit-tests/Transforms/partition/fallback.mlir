// RUN: %mlax-opt --mlax-partition --split-input-file %s | FileCheck %s

// gather has no sharding rule: its operands are gathered whole and it runs as it is.
// CHECK-LABEL: func.func @test_gather_falls_back
// CHECK-SAME:    -> (tensor<3x4xf32> {mlax.sharding = {{\[\[}}], []]})
// CHECK-NEXT:    %[[G:.*]] = "mlax.all_gather"(%arg0) {axes = ["x"], axis_size = 2 : i64, dimension = 0 : i64} : (tensor<4x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:    "mlax.gather"(%[[G]], %arg1) {{.*}} : (tensor<8x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_gather_falls_back(%a: tensor<8x4xf32> {mlax.sharding = [["x"], []]}, %i: tensor<3x1xi32>) -> tensor<3x4xf32> {
    %0 = "mlax.gather"(%a, %i) {collapsed_slice_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "clip", offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, slice_sizes = array<i64: 1, 4>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>} : (tensor<8x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>
    return %0 : tensor<3x4xf32>
  }
}

// -----

// Private calls are inlined (@helper runs on the blocks and disappears); a cond runs
// replicated on whole operands, with its global branches, where a sharding constraint is
// the identity and is dropped.
// CHECK-LABEL: func.func private @double
// CHECK-NOT:     sharding_constraint
// CHECK-LABEL: func.func @test_control_flow_runs_replicated
// CHECK-NEXT:    %[[E:.*]] = "mlax.exp"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[G:.*]] = "mlax.all_gather"(%[[E]])
// CHECK-NEXT:    call @branch(%arg1, %[[G]]) : (tensor<i1>, tensor<8xf32>) -> tensor<8xf32>
// CHECK-NOT:   @helper
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func private @double(%x: tensor<8xf32>) -> tensor<8xf32> {
    %0 = "mlax.add"(%x, %x) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %1 = "mlax.sharding_constraint"(%0) {sharding = [["x"]]} : (tensor<8xf32>) -> tensor<8xf32>
    return %1 : tensor<8xf32>
  }
  func.func private @same(%x: tensor<8xf32>) -> tensor<8xf32> {
    return %x : tensor<8xf32>
  }
  func.func private @branch(tensor<i1>, tensor<8xf32>) -> tensor<8xf32> attributes {mlax.cond = {branches = [@same, @double]}}
  func.func private @helper(%x: tensor<8xf32>) -> tensor<8xf32> {
    %0 = "mlax.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func @test_control_flow_runs_replicated(%a: tensor<8xf32> {mlax.sharding = [["x"]]}, %p: tensor<i1>) -> tensor<8xf32> {
    %0 = func.call @helper(%a) : (tensor<8xf32>) -> tensor<8xf32>
    %1 = func.call @branch(%p, %0) : (tensor<i1>, tensor<8xf32>) -> tensor<8xf32>
    return %1 : tensor<8xf32>
  }
}
