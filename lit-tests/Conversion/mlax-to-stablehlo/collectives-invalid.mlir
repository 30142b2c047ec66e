// RUN: %mlax-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect --mlax-lower-to-stablehlo

// Without a mesh there are no devices to group (vmap's collectives are mlax-batch's).
func.func @no_mesh(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{mlax-lower-to-stablehlo: mlax.psum needs the module's mlax.mesh to find its devices}}
  %0 = "mlax.psum"(%a) {axes = ["x"]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

module attributes {mlax.mesh = {axis_names = ["x"], axis_sizes = array<i64: 2>, device_ids = array<i64: 0, 1>}} {
  func.func @not_a_mesh_axis(%a: tensor<4xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{mlax.all_gather over axes ['i']: 'i' is not an axis of the module's mesh {x: 2}}}
    %0 = "mlax.all_gather"(%a) {axes = ["i"], dimension = 0 : i64, axis_size = 2 : i64} : (tensor<4xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

module attributes {mlax.mesh = {axis_names = ["x"], axis_sizes = array<i64: 2>, device_ids = array<i64: 0, 1>}} {
  func.func @wrong_axis_size(%a: tensor<4xf32>) -> tensor<12xf32> {
    // expected-error@+1 {{mlax.all_gather has axis_size 3, but axes ['x'] of the mesh {x: 2} have 2 devices}}
    %0 = "mlax.all_gather"(%a) {axes = ["x"], dimension = 0 : i64, axis_size = 3 : i64} : (tensor<4xf32>) -> tensor<12xf32>
    return %0 : tensor<12xf32>
  }
}
