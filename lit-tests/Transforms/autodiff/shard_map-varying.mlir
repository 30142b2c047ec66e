// RUN: %mlax-opt --mlax-expand-transforms %s | FileCheck %s
// RUN: %mlax-opt --mlax-expand-transforms --mlax-simulate-devices %s | %mlax-run --entry main --input '[0.5, -1.0]' --input '[[1, 2], [3, 4]]' | FileCheck %s --check-prefix=NUM
// RUN: sed 's/check_vma = true/check_vma = false/' %s | %mlax-opt --mlax-expand-transforms --mlax-simulate-devices | %mlax-run --entry main --input '[0.5, -1.0]' --input '[[1, 2], [3, 4]]' | FileCheck %s --check-prefix=UNTYPED

// Reverse mode INSIDE a shard_map body that checks varying axes (jax's check_vma): w is
// replicated (invariant), x split over "i" (varying), so x * broadcast(w) varies over "i" and
// the cotangent reaching the invariant broadcast of w is summed over "i" (the transpose of
// jax's implicit pvary); psum's own transpose is the identity. The gradient is the global one,
// the same on every device: d/dw_j sum_ij sin(x_ij w_j) = sum_i x_ij cos(x_ij w_j).
// Without check_vma (jax's untyped semantics) psum's transpose is a psum and nothing else is
// summed: each device gets twice its own rows' gradient.

// CHECK-LABEL: func.func private @local_loss_vjp(%arg0: tensor<2xf32>, %arg1: tensor<1x2xf32>, %arg2: tensor<f32>)
// CHECK:         "mlax.psum"(%{{.*}}) {axes = ["i"]} : (tensor<f32>) -> tensor<f32>
// CHECK:         %[[CT:.*]] = "mlax.mul"(%arg1, %{{.*}}) : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
// CHECK:         %[[SUM:.*]] = "mlax.psum"(%[[CT]]) {axes = ["i"]} : (tensor<1x2xf32>) -> tensor<1x2xf32>
// CHECK:         "mlax.reduce_sum"(%[[SUM]]) {dimensions = array<i64: 0>}

// NUM: result[0]: tensor<2xf32> = [1.0897942, -3.446868]
// UNTYPED: result[0]: tensor<2xf32> = [1.7551651, -1.6645873]
module attributes {mlax.mesh = {axis_names = ["i"], axis_sizes = array<i64: 2>, device_ids = array<i64: 0, 1>}} {
  func.func private @local_loss(%w: tensor<2xf32>, %x: tensor<1x2xf32>) -> tensor<f32> {
    %0 = "mlax.broadcast_in_dim"(%w) {shape = array<i64: 1, 2>, broadcast_dimensions = array<i64: 1>} : (tensor<2xf32>) -> tensor<1x2xf32>
    %1 = "mlax.mul"(%x, %0) : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
    %2 = "mlax.sin"(%1) : (tensor<1x2xf32>) -> tensor<1x2xf32>
    %3 = "mlax.reduce_sum"(%2) {dimensions = array<i64: 0, 1>} : (tensor<1x2xf32>) -> tensor<f32>
    %4 = "mlax.psum"(%3) {axes = ["i"]} : (tensor<f32>) -> tensor<f32>
    return %4 : tensor<f32>
  }
  func.func private @local_loss_vjp(tensor<2xf32>, tensor<1x2xf32>, tensor<f32>) -> (tensor<f32>, tensor<2xf32>) attributes {mlax.vjp = {callee = @local_loss, argnums = array<i64: 0>}}
  func.func private @step(%w: tensor<2xf32>, %x: tensor<1x2xf32>) -> tensor<2xf32> {
    %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %0:2 = func.call @local_loss_vjp(%w, %x, %one) : (tensor<2xf32>, tensor<1x2xf32>, tensor<f32>) -> (tensor<f32>, tensor<2xf32>)
    return %0#1 : tensor<2xf32>
  }
  func.func private @step_shard_map(tensor<2xf32>, tensor<2x2xf32>) -> tensor<2xf32> attributes {mlax.shard_map = {callee = @step, axis_names = ["i"], axis_sizes = array<i64: 2>, in_specs = [[[]], [["i"], []]], out_specs = [[[]]], check_vma = true}}
  func.func @main(%w: tensor<2xf32>, %x: tensor<2x2xf32>) -> tensor<2xf32> {
    %0 = func.call @step_shard_map(%w, %x) : (tensor<2xf32>, tensor<2x2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
