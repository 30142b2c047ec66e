// RUN: %mlax-opt --mlax-autodiff %s --split-input-file --verify-diagnostics | FileCheck %s

// Reverse mode through a custom_vjp_call: @fwd runs on the primals (its residual is cos x),
// then the cotangent goes through @bwd (ct * residual * 2), not through @f's own derivative.
// No marker function is left.
// CHECK-LABEL: func.func private @g_vjp(%arg0: tensor<f32>, %arg1: tensor<f32>) -> (tensor<f32>, tensor<f32>)
// CHECK:         %[[Y:.*]] = "mlax.sin"(%arg0)
// CHECK:         %[[R:.*]] = "mlax.cos"(%arg0)
// CHECK:         %[[CR:.*]] = "mlax.mul"(%arg1, %[[R]])
// CHECK:         %[[G:.*]] = "mlax.mul"(%[[CR]], %{{.*}})
// CHECK:         return %[[Y]], %[[G]]
// CHECK-NOT:   __mlax_custom_vjp_linear
func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  %0 = "mlax.sin"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @fwd(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0 = "mlax.sin"(%x) : (tensor<f32>) -> tensor<f32>
  %1 = "mlax.cos"(%x) : (tensor<f32>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}
func.func private @bwd(%r: tensor<f32>, %ct: tensor<f32>) -> tensor<f32> {
  %two = "mlax.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %0 = "mlax.mul"(%ct, %r) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %1 = "mlax.mul"(%0, %two) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f_custom(tensor<f32>) -> tensor<f32> attributes {mlax.custom_vjp_call = {callee = @f, fwd = @fwd, bwd = @bwd}}
func.func @g(%x: tensor<f32>) -> tensor<f32> {
  %0 = func.call @f_custom(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @g_vjp(tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.vjp = {callee = @g, argnums = array<i64: 0>}}

// -----

// Forward mode through a custom_vjp function is an error, as in JAX.
func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  %0 = "mlax.sin"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @fwd(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0 = "mlax.sin"(%x) : (tensor<f32>) -> tensor<f32>
  return %0, %x : tensor<f32>, tensor<f32>
}
func.func private @bwd(%r: tensor<f32>, %ct: tensor<f32>) -> tensor<f32> {
  return %ct : tensor<f32>
}
// expected-error@+1 {{can't apply forward-mode autodiff (jvp) to a custom_vjp function}}
func.func private @f_custom(tensor<f32>) -> tensor<f32> attributes {mlax.custom_vjp_call = {callee = @f, fwd = @fwd, bwd = @bwd}}
func.func @g(%x: tensor<f32>) -> tensor<f32> {
  %0 = func.call @f_custom(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @g_jvp(tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.jvp = {callee = @g}}
