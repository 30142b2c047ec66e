// RUN: %mlax-opt %s --mlax-autodiff --split-input-file --verify-diagnostics

// Differentiating through another kind of transformation is not supported yet.
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @g_vmap(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @g(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
// expected-error@+1 {{@g_vmap is an mlax.vmap declaration, which mlax-autodiff cannot transform through (run mlax-expand-transforms)}}
func.func private @g_vmap(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.vmap = {callee = @g, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 3 : i64}}
func.func private @f_jvp(tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.jvp = {callee = @f}}

// -----

// A function that needs its own derivative cannot be differentiated (the verifier sees the
// cycle before the pass runs).
func.func @h(%x: tensor<f32>, %c: tensor<f32>) -> tensor<f32> {
  %0:2 = func.call @h_vjp(%x, %c, %c) : (tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %0#1 : tensor<f32>
}
// expected-error@+1 {{mlax.vjp declaration @h_vjp: refers to itself through its callees}}
func.func private @h_vjp(tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.vjp = {callee = @h, argnums = array<i64: 0>}}

// -----

// An external function has no body to differentiate: reported where it is declared.
// expected-error@+1 {{mlax-autodiff: @ext has no body to differentiate}}
func.func private @ext(tensor<3xf32>) -> tensor<3xf32>
func.func @calls_ext(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @ext(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @calls_ext_vjp(tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.vjp = {callee = @calls_ext, argnums = array<i64: 0>}}

// -----

// eig's eigenvectors have a derivative only under jax's opt-in (enable_eigvec_derivs).
func.func @vectors(%a: tensor<2x2xf32>) -> tensor<2x2xcomplex<f32>> {
  // expected-error@+1 {{Derivatives of non-symmetric eigenvectors are only valid under assumptions on the input}}
  %0:2 = "mlax.eig"(%a) {compute_left_eigenvectors = false, compute_right_eigenvectors = true, enable_eigvec_derivs = false} : (tensor<2x2xf32>) -> (tensor<2xcomplex<f32>>, tensor<2x2xcomplex<f32>>)
  return %0#1 : tensor<2x2xcomplex<f32>>
}
func.func private @vectors_jvp(tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<2x2xcomplex<f32>>, tensor<2x2xcomplex<f32>>) attributes {mlax.jvp = {callee = @vectors}}
