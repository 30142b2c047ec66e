// RUN: %mlax-opt %s --allow-unregistered-dialect --mlax-lower-to-stablehlo | FileCheck %s

// conv_general_dilated: one stablehlo.convolution. mlax's dimension-number permutations
// (NHWC / HWIO / NHWC here) become StableHLO's layouts, the lo/hi padding pairs (negative
// crops) a dense Nx2 tensor; the precision (absent: DEFAULT, as jax's default) is precision_config.
// CHECK-LABEL: func.func @test_conv
// CHECK-NEXT:    %[[C:.*]] = "stablehlo.convolution"(%arg0, %arg1) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 3 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<{{\[\[}}1, 1], [0, -1]]> : tensor<2x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 1, 2>, window_strides = array<i64: 2, 1>} : (tensor<2x5x4x6xf32>, tensor<3x2x2x3xf32>) -> tensor<2x3x1x3xf32>
// CHECK-NEXT:    return %[[C]]
func.func @test_conv(%x: tensor<2x5x4x6xf32>, %w: tensor<3x2x2x3xf32>) -> tensor<2x3x1x3xf32> {
  %0 = "mlax.conv_general_dilated"(%x, %w) {window_strides = array<i64: 2, 1>, padding = array<i64: 1, 1, 0, -1>, lhs_dilation = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 2>, lhs_spec = array<i64: 0, 3, 1, 2>, rhs_spec = array<i64: 3, 2, 0, 1>, out_spec = array<i64: 0, 3, 1, 2>, feature_group_count = 3 : i64, batch_group_count = 1 : i64} : (tensor<2x5x4x6xf32>, tensor<3x2x2x3xf32>) -> tensor<2x3x1x3xf32>
  return %0 : tensor<2x3x1x3xf32>
}

// Halves convolve in f32 and round once at the end, as the reference accumulates.
// CHECK-LABEL: func.func @test_conv_f16
// CHECK-NEXT:    %[[X:.*]] = "stablehlo.convert"(%arg0) : (tensor<4x2x5xf16>) -> tensor<4x2x5xf32>
// CHECK-NEXT:    %[[W:.*]] = "stablehlo.convert"(%arg1) : (tensor<6x2x2xf16>) -> tensor<6x2x2xf32>
// CHECK-NEXT:    %[[C:.*]] = "stablehlo.convolution"(%[[X]], %[[W]]) {batch_group_count = 2 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>, {{.*}}lhs_dilation = array<i64: 2>{{.*}}precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGH>]{{.*}} -> tensor<2x6x8xf32>
// CHECK-NEXT:    "stablehlo.convert"(%[[C]]) : (tensor<2x6x8xf32>) -> tensor<2x6x8xf16>
func.func @test_conv_f16(%x: tensor<4x2x5xf16>, %w: tensor<6x2x2xf16>) -> tensor<2x6x8xf16> {
  %0 = "mlax.conv_general_dilated"(%x, %w) {window_strides = array<i64: 1>, padding = array<i64: 0, 0>, lhs_dilation = array<i64: 2>, rhs_dilation = array<i64: 1>, lhs_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, feature_group_count = 1 : i64, batch_group_count = 2 : i64, precision = ["HIGHEST", "HIGH"]} : (tensor<4x2x5xf16>, tensor<6x2x2xf16>) -> tensor<2x6x8xf16>
  return %0 : tensor<2x6x8xf16>
}

// Integer convolutions stay in their type (they wrap); their precision_config is DEFAULT, as jax's.
// CHECK-LABEL: func.func @test_conv_i8
// CHECK:         "stablehlo.convolution"(%arg0, %arg1) {{.*}}precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]{{.*}} -> tensor<1x1x2xi8>
func.func @test_conv_i8(%x: tensor<1x2x3xi8>, %w: tensor<1x2x2xi8>) -> tensor<1x1x2xi8> {
  %0 = "mlax.conv_general_dilated"(%x, %w) {window_strides = array<i64: 1>, padding = array<i64: 0, 0>, lhs_dilation = array<i64: 1>, rhs_dilation = array<i64: 1>, lhs_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<1x2x3xi8>, tensor<1x2x2xi8>) -> tensor<1x1x2xi8>
  return %0 : tensor<1x1x2xi8>
}

// reduce_window_max: stablehlo.reduce_window from -inf (also what padding and base-dilation
// holes hold) with a maximum body; the attributes are mlax's, renamed.
// CHECK-LABEL: func.func @test_reduce_window_max
// CHECK-NEXT:    %[[INIT:.*]] = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK-NEXT:    %[[R:.*]] = "stablehlo.reduce_window"(%arg0, %[[INIT]]) ({
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>):
// CHECK-NEXT:      %[[M:.*]] = "stablehlo.maximum"(%[[A]], %[[B]])
// CHECK-NEXT:      "stablehlo.return"(%[[M]])
// CHECK-NEXT:    }) {base_dilations = array<i64: 1, 2>, padding = dense<{{\[\[}}1, 0], [0, 1]]> : tensor<2x2xi64>, window_dilations = array<i64: 2, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>} : (tensor<4x5xf32>, tensor<f32>) -> tensor<3x9xf32>
// CHECK-NEXT:    return %[[R]]
func.func @test_reduce_window_max(%x: tensor<4x5xf32>) -> tensor<3x9xf32> {
  %0 = "mlax.reduce_window_max"(%x) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>, padding = array<i64: 1, 0, 0, 1>, base_dilation = array<i64: 1, 2>, window_dilation = array<i64: 2, 1>} : (tensor<4x5xf32>) -> tensor<3x9xf32>
  return %0 : tensor<3x9xf32>
}

// Half sums accumulate in f32 from 0 and round once.
// CHECK-LABEL: func.func @test_reduce_window_sum_bf16
// CHECK-NEXT:    %[[X:.*]] = "stablehlo.convert"(%arg0) : (tensor<6xbf16>) -> tensor<6xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[R:.*]] = "stablehlo.reduce_window"(%[[X]], %[[ZERO]])
// CHECK:           "stablehlo.add"
// CHECK:         "stablehlo.convert"(%[[R]]) : (tensor<3xf32>) -> tensor<3xbf16>
func.func @test_reduce_window_sum_bf16(%x: tensor<6xbf16>) -> tensor<3xbf16> {
  %0 = "mlax.reduce_window_sum"(%x) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>, padding = array<i64: 0, 0>, base_dilation = array<i64: 1>, window_dilation = array<i64: 1>} : (tensor<6xbf16>) -> tensor<3xbf16>
  return %0 : tensor<3xbf16>
}

// On booleans min is `and` from true.
// CHECK-LABEL: func.func @test_reduce_window_min_bool
// CHECK-NEXT:    %[[TRUE:.*]] = "stablehlo.constant"() {value = dense<true> : tensor<i1>}
// CHECK-NEXT:    "stablehlo.reduce_window"(%arg0, %[[TRUE]])
// CHECK:           "stablehlo.and"
func.func @test_reduce_window_min_bool(%x: tensor<5xi1>) -> tensor<4xi1> {
  %0 = "mlax.reduce_window_min"(%x) {window_dimensions = array<i64: 2>, window_strides = array<i64: 1>, padding = array<i64: 0, 0>, base_dilation = array<i64: 1>, window_dilation = array<i64: 1>} : (tensor<5xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// Integer max starts from the lowest integer.
// CHECK-LABEL: func.func @test_reduce_window_max_i8
// CHECK-NEXT:    %[[LOW:.*]] = "stablehlo.constant"() {value = dense<-128> : tensor<i8>}
// CHECK-NEXT:    "stablehlo.reduce_window"(%arg0, %[[LOW]])
func.func @test_reduce_window_max_i8(%x: tensor<3xi8>) -> tensor<2xi8> {
  %0 = "mlax.reduce_window_max"(%x) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>, padding = array<i64: 0, 1>, base_dilation = array<i64: 1>, window_dilation = array<i64: 1>} : (tensor<3xi8>) -> tensor<2xi8>
  return %0 : tensor<2xi8>
}
