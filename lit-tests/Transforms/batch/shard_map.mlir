// RUN: %mlax-opt --mlax-expand-transforms %s | FileCheck %s
// RUN: %mlax-opt --mlax-expand-transforms --mlax-simulate-devices %s | %mlax-run --entry main --input '[[1, 2], [3, 4], [5, 6]]' | FileCheck %s --check-prefix=NUM

// vmap of a shard_map: a shard_map of the vmapped callee; the batch dimension is never split
// (a leading unsharded spec entry on the batched operand and on every result).

// CHECK-LABEL: func.func private @f_vmap(%arg0: tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK:         call @body_vmap_shard_map(%arg0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK:       func.func private @body_vmap(%arg0: tensor<3x1xf32>) -> tensor<3x1xf32>
// CHECK:         "mlax.psum"(%{{.*}}) {axes = ["i"]} : (tensor<3x1xf32>) -> tensor<3x1xf32>
// CHECK:       func.func private @body_vmap_shard_map(tensor<3x2xf32>) -> tensor<3x2xf32> attributes {mlax.shard_map = {axis_names = ["i"], axis_sizes = array<i64: 2>, callee = @body_vmap, in_specs = {{\[\[\[}}], ["i"]]], out_specs = {{\[\[\[}}], ["i"]]]}}

// Each row: x * (x0 + x1).
// NUM: result[0]: tensor<3x2xf32> = {{\[}}[3.0, 6.0], [21.0, 28.0], [55.0, 66.0]]
module attributes {mlax.mesh = {axis_names = ["i"], axis_sizes = array<i64: 2>, device_ids = array<i64: 0, 1>}} {
  func.func private @body(%x: tensor<1xf32>) -> tensor<1xf32> {
    %0 = "mlax.psum"(%x) {axes = ["i"]} : (tensor<1xf32>) -> tensor<1xf32>
    %1 = "mlax.mul"(%x, %0) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    return %1 : tensor<1xf32>
  }
  func.func private @body_shard_map(tensor<2xf32>) -> tensor<2xf32> attributes {mlax.shard_map = {callee = @body, axis_names = ["i"], axis_sizes = array<i64: 2>, in_specs = [[["i"]]], out_specs = [[["i"]]]}}
  func.func private @f(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = func.call @body_shard_map(%x) : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
  func.func private @f_vmap(tensor<3x2xf32>) -> tensor<3x2xf32> attributes {mlax.vmap = {callee = @f, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 3 : i64}}
  func.func @main(%xs: tensor<3x2xf32>) -> tensor<3x2xf32> {
    %0 = func.call @f_vmap(%xs) : (tensor<3x2xf32>) -> tensor<3x2xf32>
    return %0 : tensor<3x2xf32>
  }
}
