// RUN: %mlax-opt --mlax-batch %s | FileCheck %s

// conv_general_dilated never loops (JAX's batch rule). A batched lhs folds the batch into its
// batch dimension; the result's batch dimension is split back and the batch moved to 0.
// CHECK-LABEL: func.func private @conv_lhs_vmap
// CHECK:         %[[L:.*]] = "mlax.reshape"(%arg0) {shape = array<i64: 8, 3, 6>} : (tensor<4x2x3x6xf32>) -> tensor<8x3x6xf32>
// CHECK:         %[[C:.*]] = "mlax.conv_general_dilated"(%[[L]], %arg1) {{.*}} : (tensor<8x3x6xf32>, tensor<5x3x2xf32>) -> tensor<8x5x5xf32>
// CHECK:         "mlax.reshape"(%[[C]]) {shape = array<i64: 4, 2, 5, 5>}
func.func @conv(%x: tensor<2x3x6xf32>, %w: tensor<5x3x2xf32>) -> tensor<2x5x5xf32> {
  %0 = "mlax.conv_general_dilated"(%x, %w) {window_strides = array<i64: 1>, padding = array<i64: 0, 0>, lhs_dilation = array<i64: 1>, rhs_dilation = array<i64: 1>, lhs_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<2x3x6xf32>, tensor<5x3x2xf32>) -> tensor<2x5x5xf32>
  return %0 : tensor<2x5x5xf32>
}
func.func private @conv_lhs_vmap(tensor<4x2x3x6xf32>, tensor<5x3x2xf32>) -> tensor<4x2x5x5xf32> attributes {mlax.vmap = {callee = @conv, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 4 : i64}}

// Both batched: the batch becomes feature groups (lhs features and rhs output features
// grow 4x); the result's features are split into (batch, features) and the batch moved to 0.
// CHECK-LABEL: func.func private @conv_both_vmap
// CHECK:         %[[LT:.*]] = "mlax.transpose"(%arg0) {permutation = array<i64: 1, 0, 2, 3>}
// CHECK:         %[[L:.*]] = "mlax.reshape"(%[[LT]]) {shape = array<i64: 2, 12, 6>}
// CHECK:         %[[R:.*]] = "mlax.reshape"(%arg1) {shape = array<i64: 20, 3, 2>}
// CHECK:         %[[C:.*]] = "mlax.conv_general_dilated"(%[[L]], %[[R]]) {batch_group_count = 1 : i64, feature_group_count = 4 : i64
// CHECK:         %[[S:.*]] = "mlax.reshape"(%[[C]]) {shape = array<i64: 2, 4, 5, 5>}
// CHECK:         "mlax.transpose"(%[[S]]) {permutation = array<i64: 1, 0, 2, 3>}
func.func private @conv_both_vmap(tensor<4x2x3x6xf32>, tensor<4x5x3x2xf32>) -> tensor<4x2x5x5xf32> attributes {mlax.vmap = {callee = @conv, in_axes = array<i64: 0, 0>, out_axes = array<i64: 0>, axis_size = 4 : i64}}

// reduce_window_*: a window of 1 along the batch, no padding, unit strides and dilations.
// CHECK-LABEL: func.func private @pool_vmap
// CHECK:         "mlax.reduce_window_max"(%arg0) {base_dilation = array<i64: 1, 2>, padding = array<i64: 0, 0, 1, 0>, window_dilation = array<i64: 1, 1>, window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 1, 2>} : (tensor<3x5xf32>) -> tensor<3x5xf32>
func.func @pool(%x: tensor<5xf32>) -> tensor<5xf32> {
  %0 = "mlax.reduce_window_max"(%x) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>, padding = array<i64: 1, 0>, base_dilation = array<i64: 2>, window_dilation = array<i64: 1>} : (tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
func.func private @pool_vmap(tensor<3x5xf32>) -> tensor<3x5xf32> attributes {mlax.vmap = {callee = @pool, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 3 : i64}}
