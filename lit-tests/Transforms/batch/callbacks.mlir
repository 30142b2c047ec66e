// RUN: %mlax-opt --mlax-batch %s --split-input-file --verify-diagnostics | FileCheck %s

// A debug callback is unrolled over the batch, one call per element on its slices (jax's
// debug_batching_rule); "expand_dims" calls a new declaration of the same callback once, the
// unbatched operand given a leading axis of 1.
// CHECK-LABEL: func.func private @g_vmap
// CHECK:         %[[R0:.*]] = "mlax.reshape"
// CHECK-NEXT:    call @show(%[[R0]], %arg1) : (tensor<3xf32>, tensor<f32>) -> ()
// CHECK:         %[[R1:.*]] = "mlax.reshape"
// CHECK-NEXT:    call @show(%[[R1]], %arg1) : (tensor<3xf32>, tensor<f32>) -> ()
// CHECK-NEXT:    %[[Y:.*]] = "mlax.broadcast_in_dim"(%arg1) {broadcast_dimensions = array<i64>, shape = array<i64: 1>}
// CHECK-NEXT:    %[[S:.*]] = call @scale_expand_dims(%arg0, %[[Y]]) : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    return %[[S]]
// CHECK:       func.func private @scale_expand_dims(tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32> attributes {mlax.callback = {id = 1 : i64, kind = "pure", name = "scale", ordered = false, vmap_method = "expand_dims"}}
func.func @g(%x: tensor<3xf32>, %y: tensor<f32>) -> tensor<3xf32> {
  func.call @show(%x, %y) : (tensor<3xf32>, tensor<f32>) -> ()
  %0 = func.call @scale(%x, %y) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @show(tensor<3xf32>, tensor<f32>) attributes {mlax.callback = {id = 0 : i64, kind = "debug", ordered = false, name = "show"}}
func.func private @scale(tensor<3xf32>, tensor<f32>) -> tensor<3xf32> attributes {mlax.callback = {id = 1 : i64, kind = "pure", ordered = false, name = "scale", vmap_method = "expand_dims"}}
func.func @test_vmap(%xs: tensor<2x3xf32>, %y: tensor<f32>) -> tensor<2x3xf32> {
  %0 = func.call @g_vmap(%xs, %y) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func private @g_vmap(tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> attributes {mlax.vmap = {callee = @g, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 2 : i64}}

// -----

// "sequential": an mlax.scan over the batched operands, the unbatched ones its consts.
// CHECK-LABEL: func.func private @s_vmap
// CHECK-NEXT:    %[[O:.*]] = call @scale_sequential_scan(%arg0, %arg1) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    return %[[O]]
// CHECK:       func.func private @scale_sequential(%arg0: tensor<3xf32>, %arg1: tensor<f32>) -> tensor<3xf32>
// CHECK-NEXT:    call @scale(%arg0, %arg1)
// CHECK:       func.func private @scale_sequential_scan({{.*}}) -> tensor<2x3xf32> attributes {mlax.scan = {body = @scale_sequential, length = 2 : i64, num_carry = 0 : i64, num_consts = 1 : i64, reverse = false}}
func.func @s(%x: tensor<3xf32>, %y: tensor<f32>) -> tensor<3xf32> {
  %0 = func.call @scale(%x, %y) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @scale(tensor<3xf32>, tensor<f32>) -> tensor<3xf32> attributes {mlax.callback = {id = 1 : i64, kind = "pure", ordered = false, name = "scale", vmap_method = "sequential"}}
func.func private @s_vmap(tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> attributes {mlax.vmap = {callee = @s, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 2 : i64}}

// -----

// Without a vmap_method a batched pure callback is jax's error.
func.func @n(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{mlax-batch: vmap is only supported for the pure_callback primitive when vmap_method is one of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or 'legacy_vectorized'. Got vmap_method=None. (the callback twice, @twice)}}
  %0 = func.call @twice(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @twice(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.callback = {id = 0 : i64, kind = "pure", ordered = false, name = "twice"}}
func.func private @n_vmap(tensor<2x3xf32>) -> tensor<2x3xf32> attributes {mlax.vmap = {callee = @n, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 2 : i64}}

// -----

// An unordered io callback is called once per batch element, in sequence (jax's lax.map).
// CHECK-LABEL: func.func private @u_vmap
// CHECK-NEXT:    %[[O:.*]] = call @read_sequential_scan(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    return %[[O]]
// CHECK:       func.func private @read_sequential(%arg0: tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    call @read(%arg0)
func.func @u(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @read(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @read(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.callback = {id = 0 : i64, kind = "io", ordered = false, name = "read"}}
func.func private @u_vmap(tensor<2x3xf32>) -> tensor<2x3xf32> attributes {mlax.vmap = {callee = @u, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 2 : i64}}

// -----

// An ordered io callback cannot be batched: jax's error.
func.func @o(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{mlax-batch: Cannot `vmap` ordered IO callback. (the callback log, @log)}}
  %0 = func.call @log(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @log(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.callback = {id = 0 : i64, kind = "io", ordered = true, name = "log"}}
func.func private @o_vmap(tensor<2x3xf32>) -> tensor<2x3xf32> attributes {mlax.vmap = {callee = @o, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 2 : i64}}

// -----

// test_no_ordered_io_batching: an ordered io callback on unbatched operands is copied as it is
// (jax does not batch it: nothing to map), called once.
// CHECK-LABEL: func.func private @c_vmap
// CHECK:         call @log(%arg1) : (tensor<3xf32>) -> tensor<3xf32>
func.func @c(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @log(%y) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "mlax.add"(%x, %0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
func.func private @log(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.callback = {id = 0 : i64, kind = "io", ordered = true, name = "log"}}
func.func private @c_vmap(tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> attributes {mlax.vmap = {callee = @c, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 2 : i64}}
