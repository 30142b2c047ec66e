// RUN: %mlax-roundtrip | FileCheck %s
// RUN: %mlir-opt --irdl-file=%irdl %s | %mlir-opt --irdl-file=%irdl | FileCheck %s

// Transformations are declarations: a body-less private function carrying one
// `mlax.<kind>` dictionary, whose type follows from the callee's (docs/transforms.md).
// Both mlax-opt (which also checks those types) and upstream mlir-opt read them back.

// CHECK-LABEL: func.func @f(
func.func @f(%x: tensor<3xf32>, %y: tensor<f32>) -> tensor<f32> {
  %b = "mlax.broadcast_in_dim"(%y) {shape = array<i64: 3>, broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<3xf32>
  %m = "mlax.mul"(%x, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %s = "mlax.reduce_sum"(%m) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// CHECK: func.func private @f_jvp(tensor<3xf32>, tensor<f32>, tensor<3xf32>, tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.jvp = {callee = @f}}
func.func private @f_jvp(tensor<3xf32>, tensor<f32>, tensor<3xf32>, tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.jvp = {callee = @f}}

// Cotangents come in argnums order.
// CHECK: func.func private @f_vjp(tensor<3xf32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<3xf32>) attributes {mlax.vjp = {argnums = array<i64: 1, 0>, callee = @f}}
func.func private @f_vjp(tensor<3xf32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<3xf32>) attributes {mlax.vjp = {callee = @f, argnums = array<i64: 1, 0>}}

// CHECK: func.func private @f_vmap(tensor<4x3xf32>, tensor<f32>) -> tensor<4xf32> attributes {mlax.vmap = {axis_name = "batch", axis_size = 4 : i64, callee = @f, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>}}
func.func private @f_vmap(tensor<4x3xf32>, tensor<f32>) -> tensor<4xf32> attributes {mlax.vmap = {callee = @f, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 4 : i64, axis_name = "batch"}}

// Transformations nest: the callee may itself be a declaration (grad of vmap).
// CHECK: func.func private @f_vmap_vjp(tensor<4x3xf32>, tensor<f32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4x3xf32>) attributes {mlax.vjp = {argnums = array<i64: 0>, callee = @f_vmap}}
func.func private @f_vmap_vjp(tensor<4x3xf32>, tensor<f32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4x3xf32>) attributes {mlax.vjp = {callee = @f_vmap, argnums = array<i64: 0>}}

func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mlax.tanh"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @g_jvp_rule(%x: tensor<2xf32>, %t: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = "mlax.tanh"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0, %t : tensor<2xf32>, tensor<2xf32>
}
func.func @g_fwd(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<i32>) {
  %0 = "mlax.tanh"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %c = "mlax.constant"() {value = dense<7> : tensor<i32>} : () -> tensor<i32>
  return %0, %0, %c : tensor<2xf32>, tensor<2xf32>, tensor<i32>
}
func.func @g_bwd(%r: tensor<2xf32>, %c: tensor<i32>, %ct: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mlax.mul"(%r, %ct) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK: func.func private @g_custom_jvp(tensor<2xf32>) -> tensor<2xf32> attributes {mlax.custom_jvp_call = {callee = @g, jvp = @g_jvp_rule}}
func.func private @g_custom_jvp(tensor<2xf32>) -> tensor<2xf32> attributes {mlax.custom_jvp_call = {callee = @g, jvp = @g_jvp_rule}}

// The residuals are what @g_fwd returns after @g's results (here tensor<2xf32>, tensor<i32>).
// CHECK: func.func private @g_custom_vjp(tensor<2xf32>) -> tensor<2xf32> attributes {mlax.custom_vjp_call = {bwd = @g_bwd, callee = @g, fwd = @g_fwd}}
func.func private @g_custom_vjp(tensor<2xf32>) -> tensor<2xf32> attributes {mlax.custom_vjp_call = {callee = @g, fwd = @g_fwd, bwd = @g_bwd}}

// CHECK: func.func private @g_remat(tensor<2xf32>) -> tensor<2xf32> attributes {mlax.checkpoint = {callee = @g}}
func.func private @g_remat(tensor<2xf32>) -> tensor<2xf32> attributes {mlax.checkpoint = {callee = @g}}

// CHECK: func.func private @g_remat_policy(tensor<2xf32>) -> tensor<2xf32> attributes {mlax.checkpoint = {callee = @g, policy = "dots_saveable", prevent_cse = false}}
func.func private @g_remat_policy(tensor<2xf32>) -> tensor<2xf32> attributes {mlax.checkpoint = {callee = @g, policy = "dots_saveable", prevent_cse = false}}

// CHECK-LABEL: func.func @main(
// CHECK:         call @f_vjp(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<3xf32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<3xf32>)
// CHECK:         call @g_custom_vjp(%{{.*}}) : (tensor<2xf32>) -> tensor<2xf32>
func.func @main(%x: tensor<3xf32>, %y: tensor<f32>, %z: tensor<2xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<2xf32>) {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %out, %dy, %dx = func.call @f_vjp(%x, %y, %one) : (tensor<3xf32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<3xf32>)
  %g = func.call @g_custom_vjp(%z) : (tensor<2xf32>) -> tensor<2xf32>
  return %dy, %dx, %g : tensor<f32>, tensor<3xf32>, tensor<2xf32>
}
