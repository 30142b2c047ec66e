// RUN: %mlax-opt %s --mlax-simulate-devices --split-input-file --verify-diagnostics

// The per-device program must have a body to run.
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = func.call @ext_shard_map(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  // expected-error@+1 {{mlax.shard_map declaration @ext_shard_map: callee @ext is an external function without a body; it cannot be transformed}}
  func.func private @ext_shard_map(tensor<4xf32>) -> tensor<4xf32> attributes {mlax.shard_map = {callee = @ext, axis_names = ["i"], axis_sizes = array<i64: 2>, in_specs = [[["i"]]], out_specs = [[["i"]]]}}
  func.func private @ext(tensor<2xf32>) -> tensor<2xf32>
}

// -----

// A collective over an axis that is not the shard_map's.
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = func.call @b_shard_map(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func private @b_shard_map(tensor<4xf32>) -> tensor<4xf32> attributes {mlax.shard_map = {callee = @b, axis_names = ["i"], axis_sizes = array<i64: 2>, in_specs = [[["i"]]], out_specs = [[["i"]]]}}
  func.func private @b(%a: tensor<2xf32>) -> tensor<2xf32> {
    // expected-error@+1 {{mlax-simulate-devices: mlax.psum over 'j', which no shard_map or vmap around it binds (unbound axis name)}}
    %0 = "mlax.psum"(%a) {axes = ["j"]} : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
