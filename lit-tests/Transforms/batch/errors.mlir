// RUN: %mlax-opt %s --mlax-batch --split-input-file --verify-diagnostics

// An op outside the mlax dialect has no batching rule: reported where it is.
func.func @f(%x: tensor<5xf32>, %y: tensor<5xf32>) -> tensor<5xf32> {
  // expected-error@+1 {{no batching rule for arith.addf}}
  %0 = arith.addf %x, %y : tensor<5xf32>
  return %0 : tensor<5xf32>
}
func.func private @f_vmap(tensor<5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32> attributes {mlax.vmap = {callee = @f, in_axes = array<i64: -1, 0>, out_axes = array<i64: 0>, axis_size = 4 : i64}}

// -----

// A batched output cannot have out_axes None (-1).
func.func @g(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// expected-error@+1 {{an output with out_axes None (-1) depends on the batched inputs}}
func.func private @g_vmap(tensor<4x3xf32>) -> tensor<3xf32> attributes {mlax.vmap = {callee = @g, in_axes = array<i64: 0>, out_axes = array<i64: -1>, axis_size = 4 : i64}}

// -----

// An external function has no body to batch: reported where it is declared.
// expected-error@+1 {{mlax-batch: @ext has no body to batch (an external function)}}
func.func private @ext(tensor<3xf32>) -> tensor<3xf32>
func.func @calls_ext(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @ext(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @calls_ext_vmap(tensor<4x3xf32>) -> tensor<4x3xf32> attributes {mlax.vmap = {callee = @calls_ext, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 4 : i64}}
