// RUN: %mlax-roundtrip | FileCheck %s
// RUN: %mlir-opt --irdl-file=%irdl %s | %mlir-opt --irdl-file=%irdl | FileCheck %s

// dot_general and conv_general_dilated take jax's precision per operand (lhs, rhs) as the
// optional attribute `precision`: absent means DEFAULT x DEFAULT, so it prints only when given.
// IRDL does not declare it (an optional attribute is discardable there); mlax's verifier checks it.

// CHECK-LABEL: func.func @dot
// CHECK:         "mlax.dot_general"(%arg0, %arg1) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, precision = ["HIGHEST", "DEFAULT"], result_dtype = f32
// CHECK:         "mlax.dot_general"(%arg0, %arg1)
// CHECK-NOT:       precision
// CHECK-SAME:      -> tensor<2x4xf32>
func.func @dot(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = "mlax.dot_general"(%a, %b) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = f32, precision = ["HIGHEST", "DEFAULT"]} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = "mlax.dot_general"(%a, %b) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = f32} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// CHECK-LABEL: func.func @conv
// CHECK:         "mlax.conv_general_dilated"(%arg0, %arg1) {{.*}}precision = ["HIGH", "HIGHEST"]
func.func @conv(%x: tensor<1x2x5xf32>, %w: tensor<3x2x2xf32>) -> tensor<1x3x4xf32> {
  %0 = "mlax.conv_general_dilated"(%x, %w) {window_strides = array<i64: 1>, padding = array<i64: 0, 0>, lhs_dilation = array<i64: 1>, rhs_dilation = array<i64: 1>, lhs_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, feature_group_count = 1 : i64, batch_group_count = 1 : i64, precision = ["HIGH", "HIGHEST"]} : (tensor<1x2x5xf32>, tensor<3x2x2xf32>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}
