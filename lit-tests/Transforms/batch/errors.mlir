// RUN: %mlax-opt %s --mlax-batch --split-input-file --verify-diagnostics

// A dynamic_slice whose start index is batched needs a gather, which the dialect lacks yet.
func.func @f(%x: tensor<5xf32>, %i: tensor<i32>) -> tensor<2xf32> {
  // expected-error@+1 {{gather}}
  %0 = "mlax.dynamic_slice"(%x, %i) {slice_sizes = array<i64: 2>} : (tensor<5xf32>, tensor<i32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @f_vmap(tensor<5xf32>, tensor<4xi32>) -> tensor<4x2xf32> attributes {mlax.vmap = {callee = @f, in_axes = array<i64: -1, 0>, out_axes = array<i64: 0>, axis_size = 4 : i64}}

// -----

// A batched output cannot have out_axes None (-1).
func.func @g(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// expected-error@+1 {{an output with out_axes None (-1) depends on the batched inputs}}
func.func private @g_vmap(tensor<4x3xf32>) -> tensor<3xf32> attributes {mlax.vmap = {callee = @g, in_axes = array<i64: 0>, out_axes = array<i64: -1>, axis_size = 4 : i64}}
