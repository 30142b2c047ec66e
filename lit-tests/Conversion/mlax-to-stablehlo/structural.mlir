// RUN: %mlax-opt --allow-unregistered-dialect --mlax-lower-to-stablehlo %s | FileCheck %s

// constant keeps its dense attribute (booleans that are not a splat travel as bytes: XLA reads
// hex i1 data as packed bits, our MLIR prints a byte each); iota counts along `dimension`;
// stop_gradient is gone; optimization_barrier is StableHLO's.

// CHECK-LABEL: func.func @test_constant_iota
// CHECK:         "stablehlo.constant"() {value = dense<[1.000000e+00, -0.000000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
// CHECK:         %[[BYTES:.*]] = "stablehlo.constant"() {value = dense<[1, 0]> : tensor<2xi8>} : () -> tensor<2xi8>
// CHECK:         "stablehlo.convert"(%[[BYTES]]) : (tensor<2xi8>) -> tensor<2xi1>
// CHECK:         "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<2x300xi8>
func.func @test_constant_iota() -> (tensor<2xf32>, tensor<2xi1>, tensor<2x300xi8>) {
  %0 = "mlax.constant"() {value = dense<[1.0, -0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %1 = "mlax.constant"() {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
  %2 = "mlax.iota"() {shape = array<i64: 2, 300>, dtype = i8, dimension = 1 : i64} : () -> tensor<2x300xi8>
  return %0, %1, %2 : tensor<2xf32>, tensor<2xi1>, tensor<2x300xi8>
}

// CHECK-LABEL: func.func @test_stop_gradient
// CHECK-SAME:    (%[[X:.*]]: tensor<3xui32>)
// CHECK-NEXT:    return %[[X]]
func.func @test_stop_gradient(%x: tensor<3xui32>) -> tensor<3xui32> {
  %0 = "mlax.stop_gradient"(%x) : (tensor<3xui32>) -> tensor<3xui32>
  return %0 : tensor<3xui32>
}

// CHECK-LABEL: func.func @test_optimization_barrier
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %[[B:.*]] = "stablehlo.optimization_barrier"(%[[X]]) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    return %[[B]]
func.func @test_optimization_barrier(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.optimization_barrier"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
