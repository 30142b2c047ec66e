// RUN: %mlax-opt --allow-unregistered-dialect --mlax-lower-to-stablehlo %s | FileCheck %s

// Shape ops keep their StableHLO attributes; rev is stablehlo.reverse; a chain of binary
// concatenations along one dimension becomes one N-ary stablehlo.concatenate.

// CHECK-LABEL: func.func @test_shape
// CHECK:         %[[B:.*]] = "stablehlo.broadcast_in_dim"(%{{.*}}) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[T:.*]] = "stablehlo.transpose"(%[[B]]) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK:         %[[R:.*]] = "stablehlo.reshape"(%[[T]]) : (tensor<3x2xf32>) -> tensor<6xf32>
// CHECK:         %[[V:.*]] = "stablehlo.reverse"(%[[R]]) {dimensions = array<i64: 0>}
// CHECK:         %[[S:.*]] = "stablehlo.slice"(%[[V]]) {limit_indices = array<i64: 6>, start_indices = array<i64: 1>, strides = array<i64: 2>} : (tensor<6xf32>) -> tensor<3xf32>
// CHECK:         "stablehlo.pad"(%[[S]], %{{.*}}) {edge_padding_high = array<i64: -1>, edge_padding_low = array<i64: 2>, interior_padding = array<i64: 1>} : (tensor<3xf32>, tensor<f32>) -> tensor<6xf32>
func.func @test_shape(%x: tensor<3xf32>, %p: tensor<f32>) -> tensor<6xf32> {
  %0 = "mlax.broadcast_in_dim"(%x) {shape = array<i64: 2, 3>, broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "mlax.transpose"(%0) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %2 = "mlax.reshape"(%1) {shape = array<i64: 6>} : (tensor<3x2xf32>) -> tensor<6xf32>
  %3 = "mlax.rev"(%2) {dimensions = array<i64: 0>} : (tensor<6xf32>) -> tensor<6xf32>
  %4 = "mlax.slice"(%3) {start_indices = array<i64: 1>, limit_indices = array<i64: 6>, strides = array<i64: 2>} : (tensor<6xf32>) -> tensor<3xf32>
  %5 = "mlax.pad"(%4, %p) {edge_padding_low = array<i64: 2>, edge_padding_high = array<i64: -1>, interior_padding = array<i64: 1>} : (tensor<3xf32>, tensor<f32>) -> tensor<6xf32>
  return %5 : tensor<6xf32>
}

// Start indices (clamped into bounds by StableHLO itself) are passed as they are.
// CHECK-LABEL: func.func @test_dynamic
// CHECK-SAME:    (%[[X:.*]]: tensor<4x5xi8>, %[[I:.*]]: tensor<ui32>, %[[J:.*]]: tensor<ui32>)
// CHECK:         %[[S:.*]] = "stablehlo.dynamic_slice"(%[[X]], %[[I]], %[[J]]) {slice_sizes = array<i64: 2, 2>} : (tensor<4x5xi8>, tensor<ui32>, tensor<ui32>) -> tensor<2x2xi8>
// CHECK:         "stablehlo.dynamic_update_slice"(%[[X]], %[[S]], %[[J]], %[[I]]) : (tensor<4x5xi8>, tensor<2x2xi8>, tensor<ui32>, tensor<ui32>) -> tensor<4x5xi8>
func.func @test_dynamic(%x: tensor<4x5xi8>, %i: tensor<ui32>, %j: tensor<ui32>) -> tensor<4x5xi8> {
  %0 = "mlax.dynamic_slice"(%x, %i, %j) {slice_sizes = array<i64: 2, 2>} : (tensor<4x5xi8>, tensor<ui32>, tensor<ui32>) -> tensor<2x2xi8>
  %1 = "mlax.dynamic_update_slice"(%x, %0, %j, %i) : (tensor<4x5xi8>, tensor<2x2xi8>, tensor<ui32>, tensor<ui32>) -> tensor<4x5xi8>
  return %1 : tensor<4x5xi8>
}

// CHECK-LABEL: func.func @test_concatenate_chain
// CHECK-SAME:    (%[[A:.*]]: tensor<1x2xf32>, %[[B:.*]]: tensor<2x2xf32>, %[[C:.*]]: tensor<3x2xf32>)
// CHECK-NEXT:    %[[R:.*]] = "stablehlo.concatenate"(%[[A]], %[[B]], %[[C]]) {dimension = 0 : i64} : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
// CHECK-NEXT:    return %[[R]]
func.func @test_concatenate_chain(%a: tensor<1x2xf32>, %b: tensor<2x2xf32>, %c: tensor<3x2xf32>) -> tensor<6x2xf32> {
  %0 = "mlax.concatenate"(%a, %b) {dimension = 0 : i64} : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %1 = "mlax.concatenate"(%0, %c) {dimension = 0 : i64} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  return %1 : tensor<6x2xf32>
}

// A link that is read elsewhere, or joins along another dimension, stays its own op.
// CHECK-LABEL: func.func @test_concatenate_unfused
// CHECK:         %[[AB:.*]] = "stablehlo.concatenate"(%{{.*}}, %{{.*}}) {dimension = 1 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
// CHECK:         %[[ABA:.*]] = "stablehlo.concatenate"(%[[AB]], %[[AB]]) {dimension = 1 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
// CHECK:         "stablehlo.concatenate"(%[[ABA]], %{{.*}}) {dimension = 0 : i64} : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
func.func @test_concatenate_unfused(%a: tensor<2x1xf32>, %c: tensor<1x4xf32>) -> tensor<3x4xf32> {
  %0 = "mlax.concatenate"(%a, %a) {dimension = 1 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
  %1 = "mlax.concatenate"(%0, %0) {dimension = 1 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
  %2 = "mlax.concatenate"(%1, %c) {dimension = 0 : i64} : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  return %2 : tensor<3x4xf32>
}
