// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null

// transpose and rev are a copying linalg.generic whose input map does the indexing; slice
// extracts at start + stride * i; reshape goes through 1-D; concatenate and pad extract at
// clamped indices.

// CHECK-DAG:   #[[$PERM:.*]] = affine_map<(d0, d1, d2) -> (d1, d2, d0)>
// CHECK-DAG:   #[[$REV:.*]] = affine_map<(d0, d1) -> (-d0 + 2, d1)>

// CHECK-LABEL: func.func @test_transpose
// CHECK:         linalg.generic {indexing_maps = [#[[$PERM]], #{{.*}}]
// CHECK-SAME:      ins(%{{.*}} : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<4x2x3xf32>)
func.func @test_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = "mlax.transpose"(%x) {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// CHECK-LABEL: func.func @test_rev
// CHECK:         linalg.generic {indexing_maps = [#[[$REV]], #{{.*}}]
func.func @test_rev(%x: tensor<3x4xi32>) -> tensor<3x4xi32> {
  %0 = "mlax.rev"(%x) {dimensions = array<i64: 0>} : (tensor<3x4xi32>) -> tensor<3x4xi32>
  return %0 : tensor<3x4xi32>
}

// A slice with start 0 and stride 1 in a dimension is no bare `d` input map of a longer
// dimension (linalg would infer the loop bound from it): every slice reads by tensor.extract.
// CHECK-LABEL: func.func @test_slice
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%{{.*}} : tensor<3x3xf32>)
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[I1:.*]] = arith.muli %[[I]], %c1
// CHECK:           %[[R:.*]] = arith.addi %[[I1]], %c1
// CHECK:           %[[J:.*]] = linalg.index 1 : index
// CHECK:           %[[J2:.*]] = arith.muli %[[J]], %c2
// CHECK:           %[[C:.*]] = arith.addi %[[J2]], %c2
// CHECK:           tensor.extract %arg0[%[[R]], %[[C]]] : tensor<5x7xf32>
func.func @test_slice(%x: tensor<5x7xf32>) -> tensor<3x3xf32> {
  %0 = "mlax.slice"(%x) {start_indices = array<i64: 1, 2>, limit_indices = array<i64: 4, 7>, strides = array<i64: 1, 2>} : (tensor<5x7xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// CHECK-LABEL: func.func @test_reshape
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK:         tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
func.func @test_reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = "mlax.reshape"(%x) {shape = array<i64: 4, 6>} : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// A pure merge or split of consecutive dimensions is one collapse_shape / expand_shape.
// CHECK-LABEL: func.func @test_reshape_pure
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<2x1x3x4xf32> into tensor<2x12xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2]] output_shape [1, 6, 1] : tensor<6xi32> into tensor<1x6x1xi32>
// CHECK-NEXT:    return %[[C]], %[[E]]
func.func @test_reshape_pure(%x: tensor<2x1x3x4xf32>, %y: tensor<6xi32>) -> (tensor<2x12xf32>, tensor<1x6x1xi32>) {
  %0 = "mlax.reshape"(%x) {shape = array<i64: 2, 12>} : (tensor<2x1x3x4xf32>) -> tensor<2x12xf32>
  %1 = "mlax.reshape"(%y) {shape = array<i64: 1, 6, 1>} : (tensor<6xi32>) -> tensor<1x6x1xi32>
  return %0, %1 : tensor<2x12xf32>, tensor<1x6x1xi32>
}

// Rank 0 goes through tensor<1xT>.
// CHECK-LABEL: func.func @test_reshape_rank0
// CHECK:         %[[ONE:.*]] = tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK:         tensor.expand_shape %[[ONE]] {{\[\[}}0, 1]] output_shape [1, 1]
func.func @test_reshape_rank0(%x: tensor<f32>) -> tensor<1x1xf32> {
  %0 = "mlax.reshape"(%x) {shape = array<i64: 1, 1>} : (tensor<f32>) -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}

// CHECK-LABEL: func.func @test_concatenate
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%{{.*}} : tensor<2x8xf32>)
// CHECK:           %[[J:.*]] = linalg.index 1 : index
// CHECK:           %[[IN_LHS:.*]] = arith.cmpi slt, %[[J]], %c3
// CHECK:           %[[A:.*]] = tensor.extract %{{.*}} : tensor<2x3xf32>
// CHECK:           %[[B:.*]] = tensor.extract %{{.*}} : tensor<2x5xf32>
// CHECK:           arith.select %[[IN_LHS]], %[[A]], %[[B]]
func.func @test_concatenate(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %0 = "mlax.concatenate"(%a, %b) {dimension = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// An operand empty along the dimension leaves the other one.
// CHECK-LABEL: func.func @test_concatenate_empty
// CHECK-SAME:    (%{{.*}}: tensor<0x3xi32>, %[[B:.*]]: tensor<2x3xi32>)
// CHECK-NEXT:    return %[[B]]
func.func @test_concatenate_empty(%a: tensor<0x3xi32>, %b: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = "mlax.concatenate"(%a, %b) {dimension = 0 : i64} : (tensor<0x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// pad: j = i - low reads the operand where 0 <= j, j % (interior + 1) == 0 and
// j / (interior + 1) < n (at clamped indices), else yields the padding value.
// CHECK-LABEL: func.func @test_pad
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[VALUE:.*]] : tensor<f32>) outs(%{{.*}} : tensor<7xf32>)
// CHECK:           ^bb0(%[[PAD:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[J:.*]] = arith.subi %[[I]], %c-1
// CHECK:           arith.remsi
// CHECK:           %[[X:.*]] = tensor.extract
// CHECK:           arith.select %{{.*}}, %[[X]], %[[PAD]] : f32
func.func @test_pad(%x: tensor<4xf32>, %v: tensor<f32>) -> tensor<7xf32> {
  %0 = "mlax.pad"(%x, %v) {edge_padding_low = array<i64: -1>, edge_padding_high = array<i64: 1>, interior_padding = array<i64: 1>} : (tensor<4xf32>, tensor<f32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// An empty operand gives all padding.
// CHECK-LABEL: func.func @test_pad_empty
// CHECK:         linalg.generic
// CHECK-NEXT:      ^bb0(%[[PAD:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT:      linalg.yield %[[PAD]] : i32
func.func @test_pad_empty(%x: tensor<0xi32>, %v: tensor<i32>) -> tensor<3xi32> {
  %0 = "mlax.pad"(%x, %v) {edge_padding_low = array<i64: 1>, edge_padding_high = array<i64: 2>, interior_padding = array<i64: 0>} : (tensor<0xi32>, tensor<i32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}
