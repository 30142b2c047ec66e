// RUN: %mlax-opt --mlax-expand-transforms %s | FileCheck %s

// vmap of grad (per-example gradients): the vmap's callee @grad calls the vjp declaration of
// @loss, which is resolved first; its body is then batched. One batched program: the
// unbatched weights are broadcast once, every op works on 8x3 tensors, no loop, and no
// transformation attribute is left.
// CHECK-NOT:   mlax.vjp =
// CHECK-NOT:   mlax.vmap =
// CHECK-LABEL: func.func private @grad_vmap(%arg0: tensor<3xf32>, %arg1: tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK:         %[[W:.*]] = "mlax.broadcast_in_dim"(%arg0) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 8, 3>}
// CHECK:         %[[WX:.*]] = "mlax.mul"(%[[W]], %arg1) : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK:         "mlax.cos"(%[[WX]]) : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK:         %[[G:.*]] = "mlax.mul"(%{{.*}}, %arg1) : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK:         return %[[G]]
// CHECK-NOT:   scf.for
func.func @loss(%w: tensor<3xf32>, %x: tensor<3xf32>) -> tensor<f32> {
  %0 = "mlax.mul"(%w, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "mlax.sin"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "mlax.reduce_sum"(%1) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}
func.func private @loss_vjp(tensor<3xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3xf32>) attributes {mlax.vjp = {callee = @loss, argnums = array<i64: 0>}}
func.func @grad(%w: tensor<3xf32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %0:2 = func.call @loss_vjp(%w, %x, %one) : (tensor<3xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3xf32>)
  return %0#1 : tensor<3xf32>
}
func.func private @grad_vmap(tensor<3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32> attributes {mlax.vmap = {callee = @grad, in_axes = array<i64: -1, 0>, out_axes = array<i64: 0>, axis_size = 8 : i64}}
