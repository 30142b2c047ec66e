// RUN: %mlax-opt --allow-unregistered-dialect --mlax-lower-to-stablehlo %s | FileCheck %s

// dot_general: stablehlo.dot_general with #stablehlo.dot dimension numbers. Operands that
// widen exactly into result_dtype go in as they are (XLA's mixed precision: bf16 x bf16 ->
// f32); others are converted to it first (f64 -> f32 rounds, as the reference); booleans are
// counted in i32 and compared with 0. The precision (absent: DEFAULT) is precision_config, as
// jax emits on every dot whatever the element type.

// CHECK-LABEL: func.func @test_dot
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3x4xbf16>, %[[B:.*]]: tensor<2x4x5xbf16>, %[[C:.*]]: tensor<3x4xf64>, %[[D:.*]]: tensor<4xf64>, %[[P:.*]]: tensor<3x4xi1>, %[[Q:.*]]: tensor<4xi1>)
// CHECK:         %[[R0:.*]] = "stablehlo.dot_general"(%[[A]], %[[B]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x3x4xbf16>, tensor<2x4x5xbf16>) -> tensor<2x3x5xf32>
// CHECK:         %[[C32:.*]] = "stablehlo.convert"(%[[C]]) : (tensor<3x4xf64>) -> tensor<3x4xf32>
// CHECK:         %[[D32:.*]] = "stablehlo.convert"(%[[D]]) : (tensor<4xf64>) -> tensor<4xf32>
// CHECK:         %[[R1:.*]] = "stablehlo.dot_general"(%[[C32]], %[[D32]]) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGH>]} : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
// CHECK:         %[[P32:.*]] = "stablehlo.convert"(%[[P]]) : (tensor<3x4xi1>) -> tensor<3x4xi32>
// CHECK:         %[[Q32:.*]] = "stablehlo.convert"(%[[Q]]) : (tensor<4xi1>) -> tensor<4xi32>
// CHECK:         %[[N:.*]] = "stablehlo.dot_general"(%[[P32]], %[[Q32]]) {{.*}}, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]} {{.*}} -> tensor<3xi32>
// CHECK:         %[[Z_SCALAR:.*]] = "stablehlo.constant"() {value = dense<0> : tensor<i32>}
// CHECK-NEXT:    %[[Z:.*]] = "stablehlo.broadcast_in_dim"(%[[Z_SCALAR]]) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<3xi32>
// CHECK:         %[[R2:.*]] = "stablehlo.compare"(%[[N]], %[[Z]]) {{.*}}comparison_direction NE
// An outer product has no dimension numbers at all.
// CHECK:         %[[R3:.*]] = "stablehlo.dot_general"(%[[C]], %[[D]]) {dot_dimension_numbers = #stablehlo.dot<>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4x4xf64>
// CHECK:         return %[[R0]], %[[R1]], %[[R2]], %[[R3]]
func.func @test_dot(%a: tensor<2x3x4xbf16>, %b: tensor<2x4x5xbf16>, %c: tensor<3x4xf64>, %d: tensor<4xf64>, %p: tensor<3x4xi1>, %q: tensor<4xi1>) -> (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xi1>, tensor<3x4x4xf64>) {
  %0 = "mlax.dot_general"(%a, %b) {lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>, lhs_batch_dimensions = array<i64: 0>, rhs_batch_dimensions = array<i64: 0>, result_dtype = f32} : (tensor<2x3x4xbf16>, tensor<2x4x5xbf16>) -> tensor<2x3x5xf32>
  %1 = "mlax.dot_general"(%c, %d) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = f32, precision = ["HIGHEST", "HIGH"]} : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3xf32>
  %2 = "mlax.dot_general"(%p, %q) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = i1, precision = ["DEFAULT", "HIGHEST"]} : (tensor<3x4xi1>, tensor<4xi1>) -> tensor<3xi1>
  %3 = "mlax.dot_general"(%c, %d) {lhs_contracting_dimensions = array<i64>, rhs_contracting_dimensions = array<i64>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = f64} : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4x4xf64>
  return %0, %1, %2, %3 : tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xi1>, tensor<3x4x4xf64>
}
