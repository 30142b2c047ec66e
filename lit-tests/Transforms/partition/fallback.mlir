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
