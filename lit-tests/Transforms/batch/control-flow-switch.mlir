// RUN: %mlax-opt --mlax-batch %s | FileCheck %s

// A cond of three branches (a switch) with a batched i32 index: every vmapped branch runs, the
// index is clamped into [0, 2] as the unbatched cond clamps it, and each branch but the last
// replaces the running result where the index equals its number (compare EQ + select).
// CHECK-LABEL: func.func private @f_vmap(%arg0: tensor<4xi32>, %arg1: tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK:         %[[B0:.*]] = call @neg_vmap(%arg1) : (tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK:         %[[B1:.*]] = call @abs_vmap(%arg1) : (tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK:         %[[B2:.*]] = call @exp_vmap(%arg1) : (tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK:         %[[LO:.*]] = "mlax.constant"() {value = dense<0> : tensor<i32>}
// CHECK:         %[[HI:.*]] = "mlax.constant"() {value = dense<2> : tensor<i32>}
// CHECK:         %[[I:.*]] = "mlax.clamp"(%[[LO]], %arg0, %[[HI]]) : (tensor<i32>, tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
// CHECK:         %[[IS0:.*]] = "mlax.compare"(%[[I]], %{{.*}}) {comparison_direction = "EQ"} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
// CHECK:         %[[IS1:.*]] = "mlax.compare"(%[[I]], %{{.*}}) {comparison_direction = "EQ"} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
// CHECK:         %[[P0:.*]] = "mlax.broadcast_in_dim"(%[[IS0]]) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 4, 2>}
// CHECK:         %[[S0:.*]] = "mlax.select"(%[[P0]], %[[B0]], %[[B2]])
// CHECK:         %[[P1:.*]] = "mlax.broadcast_in_dim"(%[[IS1]]) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 4, 2>}
// CHECK:         %[[S1:.*]] = "mlax.select"(%[[P1]], %[[B1]], %[[S0]])
// CHECK:         return %[[S1]]
// CHECK-NOT:   mlax.vmap =
func.func @neg(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mlax.neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @abs(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mlax.abs"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @exp(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mlax.exp"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @switch(tensor<i32>, tensor<2xf32>) -> tensor<2xf32> attributes {mlax.cond = {branches = [@neg, @abs, @exp]}}
func.func @f(%i: tensor<i32>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @switch(%i, %x) : (tensor<i32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @f_vmap(tensor<4xi32>, tensor<4x2xf32>) -> tensor<4x2xf32> attributes {mlax.vmap = {callee = @f, in_axes = array<i64: 0, 0>, out_axes = array<i64: 0>, axis_size = 4 : i64}}
