// RUN: %mlax-opt %s --split-input-file --verify-diagnostics

// A precision is a pair of jax's lax.Precision names (DEFAULT, HIGH, HIGHEST).
func.func @unknown_name(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mlax.dot_general' op precision must be a pair (lhs, rhs) of DEFAULT, HIGH, HIGHEST, got ('FASTEST', 'DEFAULT')}}
  %0 = "mlax.dot_general"(%a, %b) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = f32, precision = ["FASTEST", "DEFAULT"]} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @one_name(%x: tensor<1x2x5xf32>, %w: tensor<3x2x2xf32>) -> tensor<1x3x4xf32> {
  // expected-error@+1 {{'mlax.conv_general_dilated' op precision must be a pair (lhs, rhs) of DEFAULT, HIGH, HIGHEST, got ('HIGHEST',)}}
  %0 = "mlax.conv_general_dilated"(%x, %w) {window_strides = array<i64: 1>, padding = array<i64: 0, 0>, lhs_dilation = array<i64: 1>, rhs_dilation = array<i64: 1>, lhs_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, feature_group_count = 1 : i64, batch_group_count = 1 : i64, precision = ["HIGHEST"]} : (tensor<1x2x5xf32>, tensor<3x2x2xf32>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}
