// RUN: %mlax-opt %s --mlax-simulate-devices | FileCheck %s
// RUN: %mlax-opt %s --mlax-simulate-devices | %mlax-run --entry main --input '[[1, 2], [3, 4], [5, 6], [7, 8]]' --input '[10, 20]' | FileCheck %s --check-prefix=NUM

// A shard_map on one device: each operand cut into its blocks (one leading dimension per mesh
// axis its spec names, mesh order), the callee under one vmap per mesh axis (outermost: the
// first axis) whose axis_name its collectives resolve, and the results folded back; along an
// axis the out spec does not name the lanes agree, and lane 0 is taken.

// x: P("x", None) on a {x: 2, y: 2} mesh, b: P("y"); out: P("x", "y").
// Device (i, j) gets rows 2i..2i+1 of x and b[j]; it returns the block's first column times
// b[j], summed over the devices along "x": block (i, j) is (x[0:2, 0] + x[2:4, 0]) * b[j].

// CHECK-LABEL: func.func private @body_shard_map(%arg0: tensor<4x2xf32>, %arg1: tensor<2xf32>) -> tensor<4x2xf32>
// CHECK-NOT:     mlax.shard_map
// CHECK:         %[[X:.*]] = "mlax.reshape"(%arg0) {shape = array<i64: 2, 2, 2>}
// CHECK:         %[[B:.*]] = "mlax.reshape"(%arg1) {shape = array<i64: 2, 1>}
// CHECK:         %[[R:.*]] = call @body_x_vmap(%[[X]], %[[B]]) : (tensor<2x2x2xf32>, tensor<2x1xf32>) -> tensor<2x2x2x1xf32>
// CHECK:         "mlax.transpose"(%[[R]]) {permutation = array<i64: 0, 2, 1, 3>}
// CHECK:         "mlax.reshape"({{.*}}) {shape = array<i64: 4, 2>}
// The outer vmap binds "x": its psum over "x" became a sum over the lanes.
// CHECK-LABEL: func.func private @body_x_vmap
// CHECK-NOT:     mlax.psum
// CHECK:         "mlax.reduce_sum"

// NUM:      result[0]: tensor<4x2xf32> = {{\[}}[60.0, 120.0], [100.0, 200.0], [60.0, 120.0], [100.0, 200.0]]
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @main(%x: tensor<4x2xf32>, %b: tensor<2xf32>) -> tensor<4x2xf32> {
    %0 = func.call @body_shard_map(%x, %b) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
  func.func private @body_shard_map(tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32> attributes {mlax.shard_map = {callee = @body, axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, in_specs = [[["x"], []], [["y"]]], out_specs = [[["x"], ["y"]]]}}
  func.func private @body(%x: tensor<2x2xf32>, %b: tensor<1xf32>) -> tensor<2x1xf32> {
    %0 = "mlax.slice"(%x) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 1>, strides = array<i64: 1, 1>} : (tensor<2x2xf32>) -> tensor<2x1xf32>
    %1 = "mlax.broadcast_in_dim"(%b) {shape = array<i64: 2, 1>, broadcast_dimensions = array<i64: 1>} : (tensor<1xf32>) -> tensor<2x1xf32>
    %2 = "mlax.mul"(%0, %1) : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
    %3 = "mlax.psum"(%2) {axes = ["x"]} : (tensor<2x1xf32>) -> tensor<2x1xf32>
    return %3 : tensor<2x1xf32>
  }
}
