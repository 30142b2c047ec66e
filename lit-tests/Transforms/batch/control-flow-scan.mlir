// RUN: %mlax-opt --mlax-batch %s | FileCheck %s

// Batching an mlax.scan call (JAX's scan batching rule). The scanned operand %xs is batched at
// 0 (3 x 5 x 2): transposed to 5 x 3 x 2 so that each slice carries the batch at 0; the stacked
// result comes back 5 x 3 x 2 and is transposed to 3 x 5 x 2. The float carry enters unbatched
// but the body adds a batched value to it, so the carry fixpoint batches it (broadcast before
// the loop); the counter carry and the const %w stay unbatched. reverse is kept.
// CHECK-LABEL: func.func private @f_vmap(%arg0: tensor<3x5x2xf32>, %arg1: tensor<2xf32>) -> (tensor<3xf32>, tensor<i32>, tensor<3x5x2xf32>)
// CHECK:         %[[C:.*]] = "mlax.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK:         %[[K:.*]] = "mlax.constant"() {value = dense<0> : tensor<i32>}
// CHECK:         %[[XS:.*]] = "mlax.transpose"(%arg0) {permutation = array<i64: 1, 0, 2>} : (tensor<3x5x2xf32>) -> tensor<5x3x2xf32>
// CHECK:         %[[CB:.*]] = "mlax.broadcast_in_dim"(%[[C]]) {broadcast_dimensions = array<i64>, shape = array<i64: 3>}
// CHECK:         %[[R:.*]]:3 = call @step_vmap_scan(%[[CB]], %[[K]], %[[XS]], %arg1) : (tensor<3xf32>, tensor<i32>, tensor<5x3x2xf32>, tensor<2xf32>) -> (tensor<3xf32>, tensor<i32>, tensor<5x3x2xf32>)
// CHECK:         %[[YS:.*]] = "mlax.transpose"(%[[R]]#2) {permutation = array<i64: 1, 0, 2>} : (tensor<5x3x2xf32>) -> tensor<3x5x2xf32>
// CHECK:         return %[[R]]#0, %[[R]]#1, %[[YS]]
// CHECK-LABEL: func.func private @step_vmap(%arg0: tensor<3xf32>, %arg1: tensor<i32>, %arg2: tensor<3x2xf32>, %arg3: tensor<2xf32>) -> (tensor<3xf32>, tensor<i32>, tensor<3x2xf32>)
// CHECK:         "mlax.add"(%arg1, %{{.*}}) : (tensor<i32>, tensor<i32>) -> tensor<i32>
// CHECK:         "mlax.reduce_sum"(%{{.*}}) {dimensions = array<i64: 1>} : (tensor<3x2xf32>) -> tensor<3xf32>
// CHECK:       func.func private @step_vmap_scan(tensor<3xf32>, tensor<i32>, tensor<5x3x2xf32>, tensor<2xf32>) -> (tensor<3xf32>, tensor<i32>, tensor<5x3x2xf32>) attributes {mlax.scan = {body = @step_vmap, length = 5 : i64, num_carry = 2 : i64, num_consts = 1 : i64, reverse = true}}
// CHECK-NOT:   mlax.vmap =

func.func @step(%c: tensor<f32>, %k: tensor<i32>, %x: tensor<2xf32>, %w: tensor<2xf32>) -> (tensor<f32>, tensor<i32>, tensor<2xf32>) {
  %one = "mlax.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %0 = "mlax.add"(%k, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  %1 = "mlax.mul"(%x, %w) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = "mlax.reduce_sum"(%1) {dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<f32>
  %3 = "mlax.add"(%c, %2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %3, %0, %1 : tensor<f32>, tensor<i32>, tensor<2xf32>
}
func.func private @scan(tensor<f32>, tensor<i32>, tensor<5x2xf32>, tensor<2xf32>) -> (tensor<f32>, tensor<i32>, tensor<5x2xf32>) attributes {mlax.scan = {body = @step, length = 5 : i64, reverse = true, num_carry = 2 : i64, num_consts = 1 : i64}}
func.func @f(%xs: tensor<5x2xf32>, %w: tensor<2xf32>) -> (tensor<f32>, tensor<i32>, tensor<5x2xf32>) {
  %c = "mlax.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %k = "mlax.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %0:3 = func.call @scan(%c, %k, %xs, %w) : (tensor<f32>, tensor<i32>, tensor<5x2xf32>, tensor<2xf32>) -> (tensor<f32>, tensor<i32>, tensor<5x2xf32>)
  return %0#0, %0#1, %0#2 : tensor<f32>, tensor<i32>, tensor<5x2xf32>
}
func.func private @f_vmap(tensor<3x5x2xf32>, tensor<2xf32>) -> (tensor<3xf32>, tensor<i32>, tensor<3x5x2xf32>) attributes {mlax.vmap = {callee = @f, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0, -1, 0>, axis_size = 3 : i64}}
