// RUN: %mlax-opt %s --split-input-file --verify-diagnostics --mlax-lower-to-linalg

// Bad attributes of the windowed ops are rejected by the op's inference rule, naming it.
func.func @conv_bad_spec(%x: tensor<1x2x5xf32>, %w: tensor<3x2x2xf32>) -> tensor<1x3x4xf32> {
  // expected-error@+1 {{'mlax.conv_general_dilated' op lhs_spec (0, 1, 1) must be a permutation of 0 .. 2}}
  %0 = "mlax.conv_general_dilated"(%x, %w) {window_strides = array<i64: 1>, padding = array<i64: 0, 0>, lhs_dilation = array<i64: 1>, rhs_dilation = array<i64: 1>, lhs_spec = array<i64: 0, 1, 1>, rhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<1x2x5xf32>, tensor<3x2x2xf32>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

func.func @conv_bad_dilation(%x: tensor<1x2x5xf32>, %w: tensor<3x2x2xf32>) -> tensor<1x3x4xf32> {
  // expected-error@+1 {{rhs_dilation (0,) must be >= 1}}
  %0 = "mlax.conv_general_dilated"(%x, %w) {window_strides = array<i64: 1>, padding = array<i64: 0, 0>, lhs_dilation = array<i64: 1>, rhs_dilation = array<i64: 0>, lhs_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<1x2x5xf32>, tensor<3x2x2xf32>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

func.func @conv_bad_groups(%x: tensor<1x2x5xf32>, %w: tensor<3x1x2xf32>) -> tensor<1x3x4xf32> {
  // expected-error@+1 {{rhs output feature size 3 must be a multiple of feature_group_count 2}}
  %0 = "mlax.conv_general_dilated"(%x, %w) {window_strides = array<i64: 1>, padding = array<i64: 0, 0>, lhs_dilation = array<i64: 1>, rhs_dilation = array<i64: 1>, lhs_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, feature_group_count = 2 : i64, batch_group_count = 1 : i64} : (tensor<1x2x5xf32>, tensor<3x1x2xf32>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

func.func @reduce_window_bad_padding(%x: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'mlax.reduce_window_sum' op padding (0,) must have 2 x 1 entries}}
  %0 = "mlax.reduce_window_sum"(%x) {window_dimensions = array<i64: 2>, window_strides = array<i64: 1>, padding = array<i64: 0>, base_dilation = array<i64: 1>, window_dilation = array<i64: 1>} : (tensor<4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @reduce_window_bad_result(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{result type(s) tensor<4xf32> differ from the inferred tensor<3xf32>}}
  %0 = "mlax.reduce_window_max"(%x) {window_dimensions = array<i64: 2>, window_strides = array<i64: 1>, padding = array<i64: 0, 0>, base_dilation = array<i64: 1>, window_dilation = array<i64: 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
