// RUN: %mlax-roundtrip | FileCheck %s
// RUN: %mlir-opt --irdl-file=%irdl %s | %mlir-opt --irdl-file=%irdl | FileCheck %s

// Control flow is declarations too: a body-less private function naming its branch or body
// functions, called with func.call (docs/control_flow.md). Both mlax-opt (which also checks
// the types against the bodies) and upstream mlir-opt read them back.

func.func private @neg(%x: tensor<3xf32>, %k: tensor<f32>) -> tensor<3xf32> {
  %0 = "mlax.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @scale(%x: tensor<3xf32>, %k: tensor<f32>) -> tensor<3xf32> {
  %b = "mlax.broadcast_in_dim"(%k) {shape = array<i64: 3>, broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<3xf32>
  %0 = "mlax.mul"(%x, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @small(%x: tensor<3xf32>, %k: tensor<f32>) -> tensor<i1> {
  %s = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  %0 = "mlax.compare"(%s, %k) {comparison_direction = "LT"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func private @step(%c: tensor<3xf32>, %x: tensor<3xf32>, %k: tensor<f32>) -> (tensor<3xf32>, tensor<f32>) {
  %0 = "mlax.add"(%c, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %s = "mlax.reduce_sum"(%0) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %0, %s : tensor<3xf32>, tensor<f32>
}

// Two branches take an i1 selector ([false, true]); any other count an i32 index.
// CHECK: func.func private @if(tensor<i1>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32> attributes {mlax.cond = {branches = [@neg, @scale]}}
func.func private @if(tensor<i1>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32> attributes {mlax.cond = {branches = [@neg, @scale]}}
// CHECK: func.func private @switch(tensor<i32>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32> attributes {mlax.cond = {branches = [@neg, @scale, @neg]}}
func.func private @switch(tensor<i32>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32> attributes {mlax.cond = {branches = [@neg, @scale, @neg]}}
// CHECK: func.func private @loop(tensor<3xf32>, tensor<f32>) -> tensor<3xf32> attributes {mlax.while = {body = @scale, cond = @small}}
func.func private @loop(tensor<3xf32>, tensor<f32>) -> tensor<3xf32> attributes {mlax.while = {cond = @small, body = @scale}}
// CHECK: func.func private @scan(tensor<3xf32>, tensor<5x3xf32>, tensor<f32>) -> (tensor<3xf32>, tensor<5xf32>) attributes {mlax.scan = {body = @step, length = 5 : i64, num_carry = 1 : i64, num_consts = 1 : i64, reverse = true}}
func.func private @scan(tensor<3xf32>, tensor<5x3xf32>, tensor<f32>) -> (tensor<3xf32>, tensor<5xf32>) attributes {mlax.scan = {body = @step, length = 5 : i64, reverse = true, num_carry = 1 : i64, num_consts = 1 : i64}}

// CHECK-LABEL: func.func @main(
// CHECK:         call @if(
// CHECK:         call @scan(
func.func @main(%p: tensor<i1>, %x: tensor<3xf32>, %xs: tensor<5x3xf32>, %k: tensor<f32>) -> (tensor<3xf32>, tensor<5xf32>) {
  %0 = func.call @if(%p, %x, %k) : (tensor<i1>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %1:2 = func.call @scan(%0, %xs, %k) : (tensor<3xf32>, tensor<5x3xf32>, tensor<f32>) -> (tensor<3xf32>, tensor<5xf32>)
  return %1#0, %1#1 : tensor<3xf32>, tensor<5xf32>
}
