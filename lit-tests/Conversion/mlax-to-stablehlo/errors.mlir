// RUN: %mlax-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect --mlax-lower-to-stablehlo

// A transformation declaration must be resolved (mlax-expand-transforms) before lowering:
// the pass refuses it where it is declared.
func.func @f(%x: tensor<3xf32>, %t: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:2 = func.call @g_jvp(%x, %t) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}
func.func @g(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// expected-error@+1 {{mlax-lower-to-stablehlo: the jvp declaration @g_jvp must be resolved first (run mlax-expand-transforms)}}
func.func private @g_jvp(tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.jvp = {callee = @g}}

// -----

func.func @v(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = func.call @h_vmap(%x) : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @h(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// expected-error@+1 {{the vmap declaration @h_vmap must be resolved first}}
func.func private @h_vmap(tensor<2x3xf32>) -> tensor<2xf32> attributes {mlax.vmap = {callee = @h, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 2 : i64}}
