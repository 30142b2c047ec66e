// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s

// conv_general_dilated is bilinear: its JVP is conv(t_lhs, w) + conv(x, t_rhs).
// CHECK-LABEL: func.func private @conv_jvp
// CHECK:         %[[Y:.*]] = "mlax.conv_general_dilated"(%arg0, %arg1)
// CHECK:         %[[A:.*]] = "mlax.conv_general_dilated"(%arg2, %arg1)
// CHECK:         %[[B:.*]] = "mlax.conv_general_dilated"(%arg0, %arg3)
// CHECK:         %[[T:.*]] = "mlax.add"(%[[A]], %[[B]])
// CHECK:         return %[[Y]], %[[T]]
func.func @conv(%x: tensor<1x2x5xf32>, %w: tensor<3x2x2xf32>) -> tensor<1x3x2xf32> {
  %0 = "mlax.conv_general_dilated"(%x, %w) {window_strides = array<i64: 2>, padding = array<i64: 0, 0>, lhs_dilation = array<i64: 1>, rhs_dilation = array<i64: 1>, lhs_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<1x2x5xf32>, tensor<3x2x2xf32>) -> tensor<1x3x2xf32>
  return %0 : tensor<1x3x2xf32>
}
func.func private @conv_jvp(tensor<1x2x5xf32>, tensor<3x2x2xf32>, tensor<1x2x5xf32>, tensor<3x2x2xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>) attributes {mlax.jvp = {callee = @conv}}

// Reverse mode transposes each conv as JAX does. lhs: the cotangent convolved with the
// spatially reversed kernel, in/out features swapped, strides become lhs dilation, padding
// (k - 1 - lo, ...) keeps the unread last column; rhs: the input convolved with the cotangent.
// CHECK-LABEL: func.func private @conv_vjp
// CHECK:         "mlax.conv_general_dilated"(%arg0, %arg2) {batch_group_count = 1 : i64, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1>, lhs_spec = array<i64: 1, 0, 2>, out_spec = array<i64: 1, 0, 2>, padding = array<i64: 0, -1>, rhs_dilation = array<i64: 2>, rhs_spec = array<i64: 1, 0, 2>, window_strides = array<i64: 1>} : (tensor<1x2x5xf32>, tensor<1x3x2xf32>) -> tensor<3x2x2xf32>
// CHECK:         %[[REV:.*]] = "mlax.rev"(%arg1) {dimensions = array<i64: 2>}
// CHECK:         "mlax.conv_general_dilated"(%arg2, %[[REV]]) {batch_group_count = 1 : i64, feature_group_count = 1 : i64, lhs_dilation = array<i64: 2>, lhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, padding = array<i64: 1, 2>, rhs_dilation = array<i64: 1>, rhs_spec = array<i64: 1, 0, 2>, window_strides = array<i64: 1>} : (tensor<1x3x2xf32>, tensor<3x2x2xf32>) -> tensor<1x2x5xf32>
func.func private @conv_vjp(tensor<1x2x5xf32>, tensor<3x2x2xf32>, tensor<1x3x2xf32>) -> (tensor<1x3x2xf32>, tensor<1x2x5xf32>, tensor<3x2x2xf32>) attributes {mlax.vjp = {callee = @conv, argnums = array<i64: 0, 1>}}

// reduce_window_max: each window position is a strided slice of the padded operand; a window
// keeps its first position unless a later one is not <= it (jax's select_and_scatter_add:
// ties go to the first maximum), so the cotangent goes through selects on those primal masks;
// reduce_window_sum's cotangent is the padded cotangent summed over windows.
// CHECK-LABEL: func.func private @pool_vjp
// CHECK:         %[[M:.*]] = "mlax.reduce_window_max"(%arg0)
// CHECK:         %[[A:.*]] = "mlax.slice"(%arg0) {limit_indices = array<i64: 3>, start_indices = array<i64: 0>, strides = array<i64: 2>}
// CHECK:         %[[B:.*]] = "mlax.slice"(%arg0) {limit_indices = array<i64: 4>, start_indices = array<i64: 1>, strides = array<i64: 2>}
// CHECK:         %[[KEEP:.*]] = "mlax.compare"(%[[A]], %[[B]]) {comparison_direction = "GE"}
// CHECK:         %[[S:.*]] = "mlax.reduce_window_sum"(%arg0)
// CHECK:         "mlax.pad"(%arg2, %{{.*}}) {edge_padding_high = array<i64: 2>, edge_padding_low = array<i64: 1>, interior_padding = array<i64: 1>}
// CHECK:         "mlax.reduce_window_sum"(%{{.*}}) {base_dilation = array<i64: 1>, padding = array<i64: 0, 0>, window_dilation = array<i64: 1>, window_dimensions = array<i64: 2>, window_strides = array<i64: 1>} : (tensor<6xf32>) -> tensor<5xf32>
// CHECK:         %[[FIRST:.*]] = "mlax.select"(%[[KEEP]], %arg1, %{{.*}})
// CHECK:         %[[SECOND:.*]] = "mlax.select"(%[[KEEP]], %{{.*}}, %arg1)
// CHECK:         "mlax.pad"(%[[SECOND]], %{{.*}}) {edge_padding_high = array<i64: 1>, edge_padding_low = array<i64: 1>, interior_padding = array<i64: 1>}
// CHECK:         "mlax.pad"(%[[FIRST]], %{{.*}}) {edge_padding_high = array<i64: 2>, edge_padding_low = array<i64: 0>, interior_padding = array<i64: 1>}
// CHECK:         return %[[M]], %[[S]]
func.func @pool(%x: tensor<5xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = "mlax.reduce_window_max"(%x) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>, padding = array<i64: 0, 0>, base_dilation = array<i64: 1>, window_dilation = array<i64: 1>} : (tensor<5xf32>) -> tensor<2xf32>
  %1 = "mlax.reduce_window_sum"(%x) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>, padding = array<i64: 0, 0>, base_dilation = array<i64: 1>, window_dilation = array<i64: 1>} : (tensor<5xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}
func.func private @pool_vjp(tensor<5xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<5xf32>) attributes {mlax.vjp = {callee = @pool, argnums = array<i64: 0>}}

// reduce_window_min with padding: the padded operand holds +inf (a padded position is a
// candidate, below every number), the tangent 0; the selection runs through the positions in
// order with LE, and the tangent is a chain of selects on it.
// CHECK-LABEL: func.func private @pool_min_jvp
// CHECK:         "mlax.reduce_window_min"(%arg0)
// CHECK:         %[[INF:.*]] = "mlax.constant"() {value = dense<0x7F800000> : tensor<f32>}
// CHECK:         %[[X:.*]] = "mlax.pad"(%arg0, %[[INF]]) {edge_padding_high = array<i64: 1>, edge_padding_low = array<i64: 1>, interior_padding = array<i64: 0>}
// CHECK:         %[[ZERO:.*]] = "mlax.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK:         %[[T:.*]] = "mlax.pad"(%arg1, %[[ZERO]])
// CHECK:         %[[K1:.*]] = "mlax.compare"(%{{.*}}, %{{.*}}) {comparison_direction = "LE"}
// CHECK:         %[[S1:.*]] = "mlax.select"(%[[K1]], %{{.*}}, %{{.*}})
// CHECK:         %[[T1:.*]] = "mlax.select"(%[[K1]], %{{.*}}, %{{.*}})
// CHECK:         %[[K2:.*]] = "mlax.compare"(%[[S1]], %{{.*}}) {comparison_direction = "LE"}
// CHECK-NOT:     "mlax.select"(%[[K2]], %[[S1]]
// CHECK:         %[[T2:.*]] = "mlax.select"(%[[K2]], %[[T1]], %{{.*}})
// CHECK:         return %{{.*}}, %[[T2]]
func.func @pool_min(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "mlax.reduce_window_min"(%x) {window_dimensions = array<i64: 3>, window_strides = array<i64: 1>, padding = array<i64: 1, 1>, base_dilation = array<i64: 1>, window_dilation = array<i64: 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @pool_min_jvp(tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {mlax.jvp = {callee = @pool_min}}
