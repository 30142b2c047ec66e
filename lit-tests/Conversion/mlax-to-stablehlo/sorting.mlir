// RUN: %mlax-opt %s --allow-unregistered-dialect --mlax-lower-to-stablehlo | FileCheck %s

// sort_permutation: a stable stablehlo.sort of (keys, iota along the dimension) whose second
// result is the permutation. The comparator is jax's: -0.0 made +0.0, every NaN the canonical
// NaN, then LT in TOTALORDER (so -0.0 == +0.0 and NaNs tie, last).
// CHECK-LABEL: func.func @test_sort_permutation
// CHECK-NEXT:    %[[IOTA:.*]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<3x5xi32>
// CHECK-NEXT:    %[[S:.*]]:2 = "stablehlo.sort"(%arg0, %[[IOTA]]) ({
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>, %{{.*}}: tensor<i32>, %{{.*}}: tensor<i32>):
// CHECK-NEXT:      %[[ZERO:.*]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:      %[[ISZERO:.*]] = "stablehlo.compare"(%[[A]], %[[ZERO]]) {{.*}}comparison_direction EQ
// CHECK-NEXT:      %[[A0:.*]] = "stablehlo.select"(%[[ISZERO]], %[[ZERO]], %[[A]])
// CHECK-NEXT:      %[[ISNAN:.*]] = "stablehlo.compare"(%[[A0]], %[[A0]]) {{.*}}comparison_direction NE
// CHECK-NEXT:      %[[NAN:.*]] = "stablehlo.constant"() {value = dense<0x7FC00000> : tensor<f32>}
// CHECK-NEXT:      %[[KA:.*]] = "stablehlo.select"(%[[ISNAN]], %[[NAN]], %[[A0]])
// CHECK-NEXT:      %[[ZERO_B:.*]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:      %[[ISZERO_B:.*]] = "stablehlo.compare"(%[[B]], %[[ZERO_B]])
// CHECK-NEXT:      %[[B0:.*]] = "stablehlo.select"(%[[ISZERO_B]], %[[ZERO_B]], %[[B]])
// CHECK-NEXT:      %[[ISNAN_B:.*]] = "stablehlo.compare"(%[[B0]], %[[B0]])
// CHECK-NEXT:      %[[NAN_B:.*]] = "stablehlo.constant"
// CHECK-NEXT:      %[[KB:.*]] = "stablehlo.select"(%[[ISNAN_B]], %[[NAN_B]], %[[B0]])
// CHECK-NEXT:      %[[LT:.*]] = "stablehlo.compare"(%[[KA]], %[[KB]]) {compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}
// CHECK-NEXT:      "stablehlo.return"(%[[LT]])
// CHECK-NEXT:    }) {dimension = 1 : i64, is_stable = true}
// CHECK-NEXT:    return %[[S]]#1
func.func @test_sort_permutation(%x: tensor<3x5xf32>) -> tensor<3x5xi32> {
  %0 = "mlax.sort_permutation"(%x) {dimension = 1 : i64} : (tensor<3x5xf32>) -> tensor<3x5xi32>
  return %0 : tensor<3x5xi32>
}

// Integers compare directly, unsigned ones (and booleans) as UNSIGNED.
// CHECK-LABEL: func.func @test_sort_permutation_unsigned
// CHECK:           "stablehlo.compare"(%{{.*}}, %{{.*}}) {compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<ui8>, tensor<ui8>) -> tensor<i1>
// CHECK:         }) {dimension = 0 : i64, is_stable = true}
func.func @test_sort_permutation_unsigned(%x: tensor<4x2xui8>) -> tensor<4x2xi32> {
  %0 = "mlax.sort_permutation"(%x) {dimension = 0 : i64} : (tensor<4x2xui8>) -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}

// apply_permutation: take_along_axis, a gather whose other dimensions are batching dimensions
// of both operands and whose index vector is implicit (index_vector_dim = rank).
// CHECK-LABEL: func.func @test_apply_permutation
// CHECK-NEXT:    "stablehlo.gather"(%arg0, %arg1) {dimension_numbers = #stablehlo.gather<offset_dims = [], collapsed_slice_dims = [1], operand_batching_dims = [0, 2], start_indices_batching_dims = [0, 2], start_index_map = [1], index_vector_dim = 3>, slice_sizes = array<i64: 1, 1, 1>}
func.func @test_apply_permutation(%x: tensor<2x3x4xf16>, %i: tensor<2x3x4xi32>) -> tensor<2x3x4xf16> {
  %0 = "mlax.apply_permutation"(%x, %i) {dimension = 1 : i64} : (tensor<2x3x4xf16>, tensor<2x3x4xi32>) -> tensor<2x3x4xf16>
  return %0 : tensor<2x3x4xf16>
}

// top_k: chlo.top_k, XLA's TopK (total order, ties lowest index first); both results.
// CHECK-LABEL: func.func @test_top_k
// CHECK-NEXT:    %[[T:.*]]:2 = "chlo.top_k"(%arg0) {k = 4 : i64} : (tensor<3x10xbf16>) -> (tensor<3x4xbf16>, tensor<3x4xi32>)
// CHECK-NEXT:    return %[[T]]#0, %[[T]]#1
func.func @test_top_k(%x: tensor<3x10xbf16>) -> (tensor<3x4xbf16>, tensor<3x4xi32>) {
  %0:2 = "mlax.top_k"(%x) {k = 4 : i64} : (tensor<3x10xbf16>) -> (tensor<3x4xbf16>, tensor<3x4xi32>)
  return %0#0, %0#1 : tensor<3x4xbf16>, tensor<3x4xi32>
}

// k = 0: empty constants.
// CHECK-LABEL: func.func @test_top_k_empty
// CHECK-NEXT:    %[[V:.*]] = "stablehlo.constant"() {value = dense<> : tensor<3x0xf32>}
// CHECK-NEXT:    %[[I:.*]] = "stablehlo.constant"() {value = dense<> : tensor<3x0xi32>}
// CHECK-NEXT:    return %[[V]], %[[I]]
func.func @test_top_k_empty(%x: tensor<3x10xf32>) -> (tensor<3x0xf32>, tensor<3x0xi32>) {
  %0:2 = "mlax.top_k"(%x) {k = 0 : i64} : (tensor<3x10xf32>) -> (tensor<3x0xf32>, tensor<3x0xi32>)
  return %0#0, %0#1 : tensor<3x0xf32>, tensor<3x0xi32>
}
