// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null

// constant, iota, broadcast_in_dim, stop_gradient, optimization_barrier.

// CHECK:       #[[$MAP:.*]] = affine_map<(d0, d1, d2) -> (0, d2)>

// CHECK-LABEL: func.func @test_constant
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    return %[[C]]
func.func @test_constant() -> tensor<2xf32> {
  %0 = "mlax.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// iota counts in i64 from linalg.index, then wraps (trunci) or rounds (sitofp).
// CHECK-LABEL: func.func @test_iota
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x300xi8>)
// CHECK:           %[[I:.*]] = linalg.index 1 : index
// CHECK:           %[[W:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK:           arith.trunci %[[W]] : i64 to i8
// CHECK:         linalg.index 0
// CHECK:         arith.sitofp %{{.*}} : i64 to f32
func.func @test_iota() -> (tensor<2x300xi8>, tensor<3xf32>) {
  %0 = "mlax.iota"() {shape = array<i64: 2, 300>, dtype = i8, dimension = 1 : i64} : () -> tensor<2x300xi8>
  %1 = "mlax.iota"() {shape = array<i64: 3>, dtype = f32, dimension = 0 : i64} : () -> tensor<3xf32>
  return %0, %1 : tensor<2x300xi8>, tensor<3xf32>
}

// Operand dimension i reads result dimension broadcast_dimensions[i]; a size-1 operand
// dimension that grows reads index 0.
// CHECK-LABEL: func.func @test_broadcast_in_dim
// CHECK:         linalg.generic {indexing_maps = [#[[$MAP]], {{.*}}]
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[IN]] : f32
func.func @test_broadcast_in_dim(%x: tensor<1x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "mlax.broadcast_in_dim"(%x) {shape = array<i64: 2, 3, 4>, broadcast_dimensions = array<i64: 1, 2>} : (tensor<1x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @test_stop_gradient
// CHECK-NEXT:    return %arg0
func.func @test_stop_gradient(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "mlax.stop_gradient"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// A barrier is a call of a private identity function, one per type: cse does not merge a
// generic reading the call's result with the same generic reading its operand.
// CHECK-LABEL: func.func @test_optimization_barrier
// CHECK:         %[[A:.*]] = call @[[F:__mlax_optimization_barrier_tensor_4xf32_]](%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = call @[[F]](%arg0)
// CHECK-NEXT:    %[[C:.*]] = call @__mlax_optimization_barrier_tensor_2x3xi32_(%arg1) : (tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    return %[[A]], %[[B]], %[[C]]
// CHECK:       func.func private @[[F]](%arg0: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    return %arg0
func.func @test_optimization_barrier(%x: tensor<4xf32>, %i: tensor<2x3xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2x3xi32>) {
  %0 = "mlax.optimization_barrier"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "mlax.optimization_barrier"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "mlax.optimization_barrier"(%i) : (tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<2x3xi32>
}
