// RUN: %mlax-opt %s --mlax-batch --split-input-file --verify-diagnostics

// An op of a loop body that cannot be batched is reported where it is, inside the body: here
// the scanned slice becomes batched, and an arith op (not mlax) has no batching rule.
func.func @step(%c: tensor<f32>, %i: tensor<f32>, %x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  // expected-error@+1 {{no batching rule for arith.addf}}
  %0 = arith.addf %x, %i : tensor<f32>
  return %c, %0 : tensor<f32>, tensor<f32>
}
func.func private @scan(tensor<f32>, tensor<3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3xf32>) attributes {mlax.scan = {body = @step, length = 3 : i64, reverse = false, num_carry = 1 : i64, num_consts = 1 : i64}}
func.func @f(%c: tensor<f32>, %is: tensor<3xf32>, %x: tensor<f32>) -> tensor<3xf32> {
  %0:2 = func.call @scan(%c, %is, %x) : (tensor<f32>, tensor<3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3xf32>)
  return %0#1 : tensor<3xf32>
}
func.func private @f_vmap(tensor<f32>, tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32> attributes {mlax.vmap = {callee = @f, in_axes = array<i64: -1, 0, -1>, out_axes = array<i64: 0>, axis_size = 4 : i64}}

// -----

// A while loop's carry that the body makes batched cannot be asked for unbatched (out_axes -1).
func.func @below(%x: tensor<f32>, %w: tensor<f32>) -> tensor<i1> {
  %0 = "mlax.constant"() {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  return %0 : tensor<i1>
}
func.func @grow(%x: tensor<f32>, %w: tensor<f32>) -> tensor<f32> {
  %0 = "mlax.add"(%x, %w) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @loop(tensor<f32>, tensor<f32>) -> tensor<f32> attributes {mlax.while = {cond = @below, body = @grow}}
func.func @g(%x: tensor<f32>, %w: tensor<f32>) -> tensor<f32> {
  %0 = func.call @loop(%x, %w) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// expected-error@+1 {{an output with out_axes None (-1) depends on the batched inputs}}
func.func private @g_vmap(tensor<f32>, tensor<4xf32>) -> tensor<f32> attributes {mlax.vmap = {callee = @g, in_axes = array<i64: -1, 0>, out_axes = array<i64: -1>, axis_size = 4 : i64}}
