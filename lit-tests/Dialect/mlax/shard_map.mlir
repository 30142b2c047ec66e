// RUN: %mlax-roundtrip | FileCheck %s
// RUN: %mlir-opt --irdl-file=%irdl %s | %mlir-opt --irdl-file=%irdl | FileCheck %s

// A shard_map is a body-less private function with an mlax.shard_map dictionary: its type is
// the GLOBAL one, its callee's the per-device (LOCAL) one, each dimension divided by the sizes
// of the mesh axes its spec names. The module's mesh and the entry's specs are attributes.

// CHECK:       module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}}
// CHECK-LABEL: func.func @test_shard_map
// CHECK-SAME:    (%{{.*}}: tensor<8x4xf32> {mlax.sharding = {{\[\[}}"x"], []]}, %{{.*}}: tensor<4xf32>)
// CHECK-SAME:    -> (tensor<8x4xf32> {mlax.sharding = {{\[\[}}"x"], []]})
// CHECK:         call @body_shard_map(%{{.*}}, %{{.*}}) : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
// CHECK:       func.func private @body_shard_map(tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32> attributes {mlax.shard_map = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, callee = @body, in_specs = {{\[\[}}["x"], []], {{\[\[}}]]], out_specs = {{\[\[}}["x"], []]]}}
// CHECK:       func.func private @body(%{{.*}}: tensor<4x4xf32>, %{{.*}}: tensor<4xf32>) -> tensor<4x4xf32>
// CHECK:       func.func private @split_shard_map(tensor<8x6xf32>) -> tensor<2x6xf32> attributes {mlax.shard_map = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, callee = @split, in_specs = {{\[\[}}["x", "y"], []]], out_specs = {{\[\[}}["y"], []]]}}
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_shard_map(%a: tensor<8x4xf32> {mlax.sharding = [["x"], []]}, %b: tensor<4xf32>) -> (tensor<8x4xf32> {mlax.sharding = [["x"], []]}) {
    %0 = func.call @body_shard_map(%a, %b) : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
  func.func private @body_shard_map(tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32> attributes {mlax.shard_map = {callee = @body, axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, in_specs = [[["x"], []], [[]]], out_specs = [[["x"], []]]}}
  func.func private @body(%a: tensor<4x4xf32>, %b: tensor<4xf32>) -> tensor<4x4xf32> {
    %0 = "mlax.broadcast_in_dim"(%b) {shape = array<i64: 4, 4>, broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x4xf32>
    %1 = "mlax.mul"(%a, %0) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %2 = "mlax.psum"(%1) {axes = ["y"]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    return %2 : tensor<4x4xf32>
  }
  // A dimension split over two axes is divided by both sizes (x major).
  func.func private @split_shard_map(tensor<8x6xf32>) -> tensor<2x6xf32> attributes {mlax.shard_map = {callee = @split, axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, in_specs = [[["x", "y"], []]], out_specs = [[["y"], []]]}}
  func.func private @split(%a: tensor<2x6xf32>) -> tensor<1x6xf32> {
    %0 = "mlax.slice"(%a) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 1, 6>, strides = array<i64: 1, 1>} : (tensor<2x6xf32>) -> tensor<1x6xf32>
    return %0 : tensor<1x6xf32>
  }
}
