// RUN: %mlax-opt --mlax-expand-transforms %s | FileCheck %s

// vmap of vmap through a cond whose true branch holds a scan. The inner vmap (@f_inner, only
// %xs batched) makes a cond over vmapped branches, and the vmapped @prefix a scan over the
// transposed operand. The outer vmap (@g_outer) batches the selector too: both twice-vmapped
// branches run and select picks per example; inside @prefix_vmap_vmap the scan the inner
// vmap wrote is batched again (a scan of @add_vmap_vmap over 4 x 2 x 3 slices).
// CHECK-NOT:   mlax.vmap =
// CHECK-LABEL: func.func private @f_inner(%arg0: tensor<i1>, %arg1: tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK:         call @neg_vmap_cond(%arg0, %arg1)
// CHECK-LABEL: func.func private @g_outer(%arg0: tensor<2xi1>, %arg1: tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK:         %[[F:.*]] = call @neg_vmap_vmap(%arg1) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK:         %[[T:.*]] = call @prefix_vmap_vmap(%arg1) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK:         %[[P:.*]] = "mlax.broadcast_in_dim"(%arg0) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 2, 3, 4>}
// CHECK:         "mlax.select"(%[[P]], %[[T]], %[[F]])
// CHECK-LABEL: func.func private @prefix_vmap(%arg0: tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK:         call @add_vmap_scan(%{{.*}}, %{{.*}}) : (tensor<3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>)
// CHECK:       func.func private @neg_vmap_cond(tensor<i1>, tensor<3x4xf32>) -> tensor<3x4xf32> attributes {mlax.cond = {branches = [@neg_vmap, @prefix_vmap]}}
// CHECK-LABEL: func.func private @prefix_vmap_vmap(%arg0: tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK:         call @add_vmap_vmap_scan(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<4x2x3xf32>) -> (tensor<2x3xf32>, tensor<4x2x3xf32>)
// CHECK-LABEL: func.func private @add_vmap_vmap(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK:         "mlax.add"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:       attributes {mlax.scan = {body = @add_vmap_vmap, length = 4 : i64

func.func @add(%c: tensor<f32>, %x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0 = "mlax.add"(%c, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0, %0 : tensor<f32>, tensor<f32>
}
func.func private @cumsum(tensor<f32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) attributes {mlax.scan = {body = @add, length = 4 : i64, reverse = false, num_carry = 1 : i64, num_consts = 0 : i64}}
func.func @prefix(%xs: tensor<4xf32>) -> tensor<4xf32> {
  %zero = "mlax.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %0:2 = func.call @cumsum(%zero, %xs) : (tensor<f32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %0#1 : tensor<4xf32>
}
func.func @neg(%xs: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "mlax.neg"(%xs) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @pick(tensor<i1>, tensor<4xf32>) -> tensor<4xf32> attributes {mlax.cond = {branches = [@neg, @prefix]}}
func.func @f(%p: tensor<i1>, %xs: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @pick(%p, %xs) : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @f_inner(tensor<i1>, tensor<3x4xf32>) -> tensor<3x4xf32> attributes {mlax.vmap = {callee = @f, in_axes = array<i64: -1, 0>, out_axes = array<i64: 0>, axis_size = 3 : i64}}
func.func @g(%p: tensor<i1>, %xs: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = func.call @f_inner(%p, %xs) : (tensor<i1>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
func.func private @g_outer(tensor<2xi1>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32> attributes {mlax.vmap = {callee = @g, in_axes = array<i64: 0, 0>, out_axes = array<i64: 0>, axis_size = 2 : i64}}
