// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null

// dynamic_slice / dynamic_update_slice: each start index is extracted, extended to i64 and
// clamped into [0, dim - size], then read or written through linalg.index.

// CHECK-LABEL: func.func @test_dynamic_slice
// CHECK:         %[[I:.*]] = tensor.extract %arg1[] : tensor<i8>
// CHECK:         %[[W:.*]] = arith.extsi %[[I]] : i8 to i64
// CHECK:         %[[LO:.*]] = arith.maxsi %[[W]], %c0_i64
// CHECK:         %[[HI:.*]] = arith.minsi %[[LO]], %c3_i64
// CHECK:         %[[S0:.*]] = arith.index_cast %[[HI]] : i64 to index
// CHECK:         %[[S1:.*]] = arith.index_cast
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xf32>)
// CHECK:           %[[D0:.*]] = linalg.index 0
// CHECK:           %[[A0:.*]] = arith.addi %[[S0]], %[[D0]]
// CHECK:           %[[D1:.*]] = linalg.index 1
// CHECK:           %[[A1:.*]] = arith.addi %[[S1]], %[[D1]]
// CHECK:           tensor.extract %arg0[%[[A0]], %[[A1]]] : tensor<5x7xf32>
func.func @test_dynamic_slice(%x: tensor<5x7xf32>, %i: tensor<i8>, %j: tensor<i8>) -> tensor<2x3xf32> {
  %0 = "mlax.dynamic_slice"(%x, %i, %j) {slice_sizes = array<i64: 2, 3>} : (tensor<5x7xf32>, tensor<i8>, tensor<i8>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// Unsigned indices only need minui (ui64 values past the i64 range clamp high too).
// CHECK-LABEL: func.func @test_unsigned_index
// CHECK-SAME:    tensor<i64>
// CHECK:         %[[I:.*]] = tensor.extract %arg1[] : tensor<i64>
// CHECK-NOT:     arith.maxsi
// CHECK:         %[[C:.*]] = arith.minui %[[I]], %c3_i64
// CHECK-NEXT:    arith.index_cast %[[C]]
// CHECK:         arith.extui %{{.*}} : i32 to i64
func.func @test_unsigned_index(%x: tensor<4xi32>, %i: tensor<ui64>, %j: tensor<ui32>) -> (tensor<1xi32>, tensor<1xi32>) {
  %0 = "mlax.dynamic_slice"(%x, %i) {slice_sizes = array<i64: 1>} : (tensor<4xi32>, tensor<ui64>) -> tensor<1xi32>
  %1 = "mlax.dynamic_slice"(%x, %j) {slice_sizes = array<i64: 1>} : (tensor<4xi32>, tensor<ui32>) -> tensor<1xi32>
  return %0, %1 : tensor<1xi32>, tensor<1xi32>
}

// The update is read where i - start < size (unsigned: below the window wraps high), at
// minui-clamped indices.
// CHECK-LABEL: func.func @test_dynamic_update_slice
// CHECK:         linalg.generic {{.*}} ins(%arg0 : tensor<5x7xf32>) outs(%{{.*}} : tensor<5x7xf32>)
// CHECK:         ^bb0(%[[OLD:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[OFF:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[OFF]], %c2
// CHECK:           arith.minui %[[OFF]], %c1
// CHECK:           %[[BOTH:.*]] = arith.andi %[[IN]], %{{.*}} : i1
// CHECK:           %[[NEW:.*]] = tensor.extract %arg1
// CHECK:           arith.select %[[BOTH]], %[[NEW]], %[[OLD]] : f32
func.func @test_dynamic_update_slice(%x: tensor<5x7xf32>, %u: tensor<2x3xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<5x7xf32> {
  %0 = "mlax.dynamic_update_slice"(%x, %u, %i, %j) : (tensor<5x7xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<5x7xf32>
  return %0 : tensor<5x7xf32>
}

// An empty update leaves the operand; rank 0 reads the update itself.
// CHECK-LABEL: func.func @test_empty_and_rank0
// CHECK-SAME:    (%[[X:.*]]: tensor<3x4xf32>, %{{.*}}: tensor<0x2xf32>, %{{.*}}: tensor<i32>, %[[S:.*]]: tensor<f32>, %[[T:.*]]: tensor<f32>)
// CHECK:         linalg.generic {{.*}} ins(%[[S]] : tensor<f32>)
// CHECK:           %[[V:.*]] = tensor.extract %[[T]][] : tensor<f32>
// CHECK-NEXT:      linalg.yield %[[V]]
// CHECK:         return %[[X]]
func.func @test_empty_and_rank0(%x: tensor<3x4xf32>, %u: tensor<0x2xf32>, %i: tensor<i32>, %s: tensor<f32>, %t: tensor<f32>) -> (tensor<3x4xf32>, tensor<f32>) {
  %0 = "mlax.dynamic_update_slice"(%x, %u, %i, %i) : (tensor<3x4xf32>, tensor<0x2xf32>, tensor<i32>, tensor<i32>) -> tensor<3x4xf32>
  %1 = "mlax.dynamic_update_slice"(%s, %t) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0, %1 : tensor<3x4xf32>, tensor<f32>
}
