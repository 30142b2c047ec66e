// RUN: %mlax-opt --mlax-batch %s | FileCheck %s

// Batching an mlax.while call (JAX's while_loop batching rule). Which carries are batched is a
// fixpoint over the body: a carry is batched if it enters batched or the body makes it so.
// - Unbatched predicate (@f_vmap: only %x is batched, the counter and the bound are not): a
//   NEW while over the vmapped cond and body; the counter stays a scalar.
// - Batched predicate (@f_vmap_n: the bound differs per example): every carry is batched (the
//   counter is broadcast); the loop runs while ANY example's predicate holds
//   (reduce_or), and the body keeps the carries of finished examples (select per example).

// CHECK-LABEL: func.func private @f_vmap(%arg0: tensor<4x3xf32>, %arg1: tensor<i32>) -> tensor<4x3xf32>
// CHECK:         %[[Z:.*]] = "mlax.constant"() {value = dense<0> : tensor<i32>}
// CHECK:         %[[R:.*]]:2 = call @step_vmap_while(%[[Z]], %arg0, %arg1) : (tensor<i32>, tensor<4x3xf32>, tensor<i32>) -> (tensor<i32>, tensor<4x3xf32>)
// CHECK:         return %[[R]]#1

// CHECK-LABEL: func.func private @f_vmap_n(%arg0: tensor<3xf32>, %arg1: tensor<4xi32>) -> tensor<4x3xf32>
// CHECK:         %[[Z:.*]] = "mlax.constant"() {value = dense<0> : tensor<i32>}
// CHECK:         %[[I:.*]] = "mlax.broadcast_in_dim"(%[[Z]]) {broadcast_dimensions = array<i64>, shape = array<i64: 4>}
// CHECK:         %[[X:.*]] = "mlax.broadcast_in_dim"(%arg0) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 4, 3>}
// CHECK:         %[[R:.*]]:2 = call @step_vmap_1_masked_while(%[[I]], %[[X]], %arg1) : (tensor<4xi32>, tensor<4x3xf32>, tensor<4xi32>) -> (tensor<4xi32>, tensor<4x3xf32>)
// CHECK:         return %[[R]]#1

// CHECK-LABEL: func.func private @step_vmap(%arg0: tensor<i32>, %arg1: tensor<4x3xf32>, %arg2: tensor<i32>) -> (tensor<i32>, tensor<4x3xf32>)
// CHECK:         "mlax.add"(%arg0, %{{.*}}) : (tensor<i32>, tensor<i32>) -> tensor<i32>
// CHECK:         "mlax.sin"(%arg1) : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-LABEL: func.func private @below_vmap(%arg0: tensor<i32>, %arg1: tensor<4x3xf32>, %arg2: tensor<i32>) -> tensor<i1>
// CHECK:       func.func private @step_vmap_while({{.*}}) -> (tensor<i32>, tensor<4x3xf32>) attributes {mlax.while = {body = @step_vmap, cond = @below_vmap}}

// CHECK-LABEL: func.func private @step_vmap_1(%arg0: tensor<4xi32>, %arg1: tensor<4x3xf32>, %arg2: tensor<4xi32>) -> (tensor<4xi32>, tensor<4x3xf32>)
// CHECK-LABEL: func.func private @below_vmap_1(%arg0: tensor<4xi32>, %arg1: tensor<4x3xf32>, %arg2: tensor<4xi32>) -> tensor<4xi1>
// CHECK:         "mlax.compare"(%arg0, %arg2) {comparison_direction = "LT"} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
// CHECK-LABEL: func.func private @below_vmap_1_any(%arg0: tensor<4xi32>, %arg1: tensor<4x3xf32>, %arg2: tensor<4xi32>) -> tensor<i1>
// CHECK:         %[[P:.*]] = call @below_vmap_1(%arg0, %arg1, %arg2)
// CHECK:         %[[ANY:.*]] = "mlax.reduce_or"(%[[P]]) {dimensions = array<i64: 0>} : (tensor<4xi1>) -> tensor<i1>
// CHECK:         return %[[ANY]]
// CHECK-LABEL: func.func private @step_vmap_1_masked(%arg0: tensor<4xi32>, %arg1: tensor<4x3xf32>, %arg2: tensor<4xi32>) -> (tensor<4xi32>, tensor<4x3xf32>)
// CHECK:         %[[P:.*]] = call @below_vmap_1(%arg0, %arg1, %arg2)
// CHECK:         %[[NEW:.*]]:2 = call @step_vmap_1(%arg0, %arg1, %arg2)
// CHECK:         %[[I:.*]] = "mlax.select"(%[[P]], %[[NEW]]#0, %arg0) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK:         %[[PX:.*]] = "mlax.broadcast_in_dim"(%[[P]]) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 4, 3>}
// CHECK:         %[[X:.*]] = "mlax.select"(%[[PX]], %[[NEW]]#1, %arg1) : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK:         return %[[I]], %[[X]]
// CHECK:       func.func private @step_vmap_1_masked_while({{.*}}) -> (tensor<4xi32>, tensor<4x3xf32>) attributes {mlax.while = {body = @step_vmap_1_masked, cond = @below_vmap_1_any}}
// CHECK-NOT:   mlax.vmap =

func.func @below(%i: tensor<i32>, %x: tensor<3xf32>, %n: tensor<i32>) -> tensor<i1> {
  %0 = "mlax.compare"(%i, %n) {comparison_direction = "LT"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func @step(%i: tensor<i32>, %x: tensor<3xf32>, %n: tensor<i32>) -> (tensor<i32>, tensor<3xf32>) {
  %one = "mlax.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %0 = "mlax.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  %1 = "mlax.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<i32>, tensor<3xf32>
}
func.func private @loop(tensor<i32>, tensor<3xf32>, tensor<i32>) -> (tensor<i32>, tensor<3xf32>) attributes {mlax.while = {cond = @below, body = @step}}
func.func @f(%x: tensor<3xf32>, %n: tensor<i32>) -> tensor<3xf32> {
  %zero = "mlax.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %0:2 = func.call @loop(%zero, %x, %n) : (tensor<i32>, tensor<3xf32>, tensor<i32>) -> (tensor<i32>, tensor<3xf32>)
  return %0#1 : tensor<3xf32>
}
func.func private @f_vmap(tensor<4x3xf32>, tensor<i32>) -> tensor<4x3xf32> attributes {mlax.vmap = {callee = @f, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 4 : i64}}
func.func private @f_vmap_n(tensor<3xf32>, tensor<4xi32>) -> tensor<4x3xf32> attributes {mlax.vmap = {callee = @f, in_axes = array<i64: -1, 0>, out_axes = array<i64: 0>, axis_size = 4 : i64}}
