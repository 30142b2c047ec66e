// RUN: %mlax-opt --allow-unregistered-dialect --mlax-lower-to-stablehlo %s | FileCheck %s

// convert is stablehlo.convert (float -> int saturates on XLA, NaN -> 0), but a conversion to
// i1 is x != 0 (NaN is true) and f16/bf16 are reached through f32, as the reference rounds.

// CHECK-LABEL: func.func @test_convert
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>, %[[D:.*]]: tensor<3xf64>, %[[B:.*]]: tensor<3xi1>)
// CHECK:         "stablehlo.convert"(%[[X]]) : (tensor<3xf32>) -> tensor<3xui8>
// CHECK:         %[[Z_SCALAR:.*]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[Z:.*]] = "stablehlo.broadcast_in_dim"(%[[Z_SCALAR]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<3xf32>
// CHECK:         "stablehlo.compare"(%[[X]], %[[Z]]) {compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}
// CHECK:         %[[F:.*]] = "stablehlo.convert"(%[[D]]) : (tensor<3xf64>) -> tensor<3xf32>
// CHECK:         "stablehlo.convert"(%[[F]]) : (tensor<3xf32>) -> tensor<3xf16>
// CHECK:         "stablehlo.convert"(%[[B]]) : (tensor<3xi1>) -> tensor<3xi32>
func.func @test_convert(%x: tensor<3xf32>, %d: tensor<3xf64>, %b: tensor<3xi1>) -> (tensor<3xui8>, tensor<3xi1>, tensor<3xf16>, tensor<3xi32>) {
  %0 = "mlax.convert"(%x) {new_dtype = ui8} : (tensor<3xf32>) -> tensor<3xui8>
  %1 = "mlax.convert"(%x) {new_dtype = i1} : (tensor<3xf32>) -> tensor<3xi1>
  %2 = "mlax.convert"(%d) {new_dtype = f16} : (tensor<3xf64>) -> tensor<3xf16>
  %3 = "mlax.convert"(%b) {new_dtype = i32} : (tensor<3xi1>) -> tensor<3xi32>
  return %0, %1, %2, %3 : tensor<3xui8>, tensor<3xi1>, tensor<3xf16>, tensor<3xi32>
}

// A conversion to the operand's own type is the operand.
// CHECK-LABEL: func.func @test_convert_same
// CHECK-NEXT:    return %arg0
func.func @test_convert_same(%x: tensor<3xbf16>) -> tensor<3xbf16> {
  %0 = "mlax.convert"(%x) {new_dtype = bf16} : (tensor<3xbf16>) -> tensor<3xbf16>
  return %0 : tensor<3xbf16>
}

// bitcast_convert to a narrower type adds a minor dimension, to a wider one consumes it.
// CHECK-LABEL: func.func @test_bitcast
// CHECK:         "stablehlo.bitcast_convert"(%{{.*}}) : (tensor<2xf32>) -> tensor<2x4xui8>
// CHECK:         "stablehlo.bitcast_convert"(%{{.*}}) : (tensor<2x4xui8>) -> tensor<2xi32>
func.func @test_bitcast(%x: tensor<2xf32>) -> tensor<2xi32> {
  %0 = "mlax.bitcast_convert"(%x) {new_dtype = ui8} : (tensor<2xf32>) -> tensor<2x4xui8>
  %1 = "mlax.bitcast_convert"(%0) {new_dtype = i32} : (tensor<2x4xui8>) -> tensor<2xi32>
  return %1 : tensor<2xi32>
}
