// RUN: %mlax-opt --mlax-batch %s | FileCheck %s

// Batching an mlax.cond call (JAX's cond batching rule).
// - Unbatched selector (@f_vmap): a NEW cond over mlax.vmap declarations of the branches,
//   resolved at once (each gets a batched body); operands keep their batching (%w stays
//   unbatched), results are batched at 0.
// - Batched selector (@f_vmap_pred): no cond; both vmapped branches run and mlax.select picks
//   per example, the selector broadcast to the result's shape.
// - Nothing batched feeds the cond (@g_vmap): the call is copied as it is.

// CHECK-LABEL: func.func private @f_vmap(%arg0: tensor<i1>, %arg1: tensor<3x5xf32>, %arg2: tensor<3xf32>) -> tensor<5x3xf32>
// CHECK:         %[[X:.*]] = "mlax.transpose"(%arg1) {permutation = array<i64: 1, 0>}
// CHECK:         %[[R:.*]] = call @neg_vmap_cond(%arg0, %[[X]], %arg2) : (tensor<i1>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
// CHECK:         return %[[R]]

// CHECK-LABEL: func.func private @f_vmap_pred(%arg0: tensor<5xi1>, %arg1: tensor<3xf32>, %arg2: tensor<3xf32>) -> tensor<5x3xf32>
// CHECK-NOT:     mlax.cond
// CHECK:         %[[F:.*]] = call @neg_vmap_1(%arg1, %arg2) : (tensor<3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
// CHECK:         %[[T:.*]] = call @mul_vmap_1(%arg1, %arg2) : (tensor<3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
// CHECK:         %[[P:.*]] = "mlax.broadcast_in_dim"(%arg0) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 5, 3>} : (tensor<5xi1>) -> tensor<5x3xi1>
// CHECK:         %[[S:.*]] = "mlax.select"(%[[P]], %[[T]], %[[F]])
// CHECK:         return %[[S]]

// CHECK-LABEL: func.func private @g_vmap(%arg0: tensor<i1>, %arg1: tensor<3xf32>, %arg2: tensor<2x4xf32>) -> (tensor<3xf32>, tensor<4x2xf32>)
// CHECK:         call @pick(%arg0, %arg1, %arg1) : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK:         "mlax.neg"(%arg2) : (tensor<2x4xf32>) -> tensor<2x4xf32>

// The branches of the unbatched-selector cond: %x batched, %w not.
// CHECK-LABEL: func.func private @neg_vmap(%arg0: tensor<5x3xf32>, %arg1: tensor<3xf32>) -> tensor<5x3xf32>
// CHECK:         "mlax.neg"(%arg0) : (tensor<5x3xf32>) -> tensor<5x3xf32>
// CHECK-LABEL: func.func private @mul_vmap(%arg0: tensor<5x3xf32>, %arg1: tensor<3xf32>) -> tensor<5x3xf32>
// CHECK:         %[[W:.*]] = "mlax.broadcast_in_dim"(%arg1) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 5, 3>}
// CHECK:         "mlax.mul"(%arg0, %[[W]]) : (tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
// CHECK:       func.func private @neg_vmap_cond(tensor<i1>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<5x3xf32> attributes {mlax.cond = {branches = [@neg_vmap, @mul_vmap]}}

// The branches of the batched-selector cond see only unbatched operands: their results are
// broadcast to the batch.
// CHECK-LABEL: func.func private @neg_vmap_1(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> tensor<5x3xf32>
// CHECK:         %[[N:.*]] = "mlax.neg"(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK:         "mlax.broadcast_in_dim"(%[[N]]) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 5, 3>}
// CHECK-NOT:   mlax.vmap =

func.func @neg(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @mul(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.mul"(%x, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @pick(tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> attributes {mlax.cond = {branches = [@neg, @mul]}}
func.func @f(%p: tensor<i1>, %x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @pick(%p, %x, %w) : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @f_vmap(tensor<i1>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<5x3xf32> attributes {mlax.vmap = {callee = @f, in_axes = array<i64: -1, 1, -1>, out_axes = array<i64: 0>, axis_size = 5 : i64}}
func.func private @f_vmap_pred(tensor<5xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<5x3xf32> attributes {mlax.vmap = {callee = @f, in_axes = array<i64: 0, -1, -1>, out_axes = array<i64: 0>, axis_size = 5 : i64}}
func.func @g(%p: tensor<i1>, %x: tensor<3xf32>, %y: tensor<4xf32>) -> (tensor<3xf32>, tensor<4xf32>) {
  %0 = func.call @pick(%p, %x, %x) : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "mlax.neg"(%y) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<3xf32>, tensor<4xf32>
}
func.func private @g_vmap(tensor<i1>, tensor<3xf32>, tensor<2x4xf32>) -> (tensor<3xf32>, tensor<4x2xf32>) attributes {mlax.vmap = {callee = @g, in_axes = array<i64: -1, -1, 0>, out_axes = array<i64: -1, 1>, axis_size = 2 : i64}}
