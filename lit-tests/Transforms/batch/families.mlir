// RUN: %mlax-opt --mlax-batch %s | FileCheck %s

// Rule families with a batched %x and unbatched %y, %p: concatenate broadcasts the unbatched
// side and shifts its dimension; cumsum shifts its axis; select broadcasts the predicate and
// the constant branch; broadcast_in_dim keeps the batch at 0 and shifts the other dimensions.
// CHECK-LABEL: func.func private @f_vmap
// CHECK:         %[[Y:.*]] = "mlax.broadcast_in_dim"(%arg1) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 4, 2>}
// CHECK:         "mlax.concatenate"(%arg0, %[[Y]]) {dimension = 1 : i64} : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x5xf32>
// CHECK:         "mlax.cumsum"(%arg0) {axis = 1 : i64, reverse = 0 : i64}
// CHECK:         %[[P:.*]] = "mlax.broadcast_in_dim"(%arg2) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 4, 3>} : (tensor<3xi1>) -> tensor<4x3xi1>
// CHECK:         "mlax.select"(%[[P]], %arg0, %{{.*}}) : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK:         "mlax.broadcast_in_dim"(%arg0) {broadcast_dimensions = array<i64: 0, 2>, shape = array<i64: 4, 2, 3>}
func.func @f(%x: tensor<3xf32>, %y: tensor<2xf32>, %p: tensor<3xi1>) -> (tensor<5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>) {
  %0 = "mlax.concatenate"(%x, %y) {dimension = 0 : i64} : (tensor<3xf32>, tensor<2xf32>) -> tensor<5xf32>
  %1 = "mlax.cumsum"(%x) {axis = 0 : i64, reverse = 0 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  %z = "mlax.constant"() {value = dense<0.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %2 = "mlax.select"(%p, %x, %z) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %3 = "mlax.broadcast_in_dim"(%x) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 2, 3>} : (tensor<3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3 : tensor<5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>
}
func.func private @f_vmap(tensor<4x3xf32>, tensor<2xf32>, tensor<3xi1>) -> (tensor<4x5xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x2x3xf32>) attributes {mlax.vmap = {callee = @f, in_axes = array<i64: 0, -1, -1>, out_axes = array<i64: 0, 0, 0, 0>, axis_size = 4 : i64}}
