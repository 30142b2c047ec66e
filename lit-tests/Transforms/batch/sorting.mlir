// RUN: %mlax-opt --mlax-batch %s | FileCheck %s

// The sorting ops sort each batch element along the same dimension, one further along; an
// unbatched operand of apply_permutation is broadcast along the batch.
// CHECK-LABEL: func.func private @f_vmap
// CHECK:         %[[P:.*]] = "mlax.sort_permutation"(%arg0) {dimension = 2 : i64} : (tensor<3x2x5xf32>) -> tensor<3x2x5xi32>
// CHECK:         "mlax.apply_permutation"(%arg0, %[[P]]) {dimension = 2 : i64} : (tensor<3x2x5xf32>, tensor<3x2x5xi32>) -> tensor<3x2x5xf32>
// CHECK-LABEL: func.func private @g_vmap
// CHECK:         %[[B:.*]] = "mlax.broadcast_in_dim"(%arg1) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 4, 5>}
// CHECK:         "mlax.apply_permutation"(%arg0, %[[B]]) {dimension = 1 : i64} : (tensor<4x5xf32>, tensor<4x5xi32>) -> tensor<4x5xf32>
func.func @f(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %p = "mlax.sort_permutation"(%x) {dimension = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xi32>
  %0 = "mlax.apply_permutation"(%x, %p) {dimension = 1 : i64} : (tensor<2x5xf32>, tensor<2x5xi32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}
func.func private @f_vmap(tensor<3x2x5xf32>) -> tensor<3x2x5xf32> attributes {mlax.vmap = {callee = @f, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 3 : i64}}
func.func @g(%x: tensor<5xf32>, %p: tensor<5xi32>) -> tensor<5xf32> {
  %0 = "mlax.apply_permutation"(%x, %p) {dimension = 0 : i64} : (tensor<5xf32>, tensor<5xi32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
func.func private @g_vmap(tensor<4x5xf32>, tensor<5xi32>) -> tensor<4x5xf32> attributes {mlax.vmap = {callee = @g, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 4 : i64}}

// top_k works on the last dimension: the batched op is the same op.
// CHECK-LABEL: func.func private @h_vmap
// CHECK:         %[[T:.*]]:2 = "mlax.top_k"(%arg0) {k = 2 : i64} : (tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi32>)
// CHECK:         return %[[T]]#0, %[[T]]#1
func.func @h(%x: tensor<5xf32>) -> (tensor<2xf32>, tensor<2xi32>) {
  %0:2 = "mlax.top_k"(%x) {k = 2 : i64} : (tensor<5xf32>) -> (tensor<2xf32>, tensor<2xi32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xi32>
}
func.func private @h_vmap(tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi32>) attributes {mlax.vmap = {callee = @h, in_axes = array<i64: 0>, out_axes = array<i64: 0, 0>, axis_size = 3 : i64}}
