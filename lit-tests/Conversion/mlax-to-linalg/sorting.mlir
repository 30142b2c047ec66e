// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null

// sort_permutation: the identity permutation (an iota along the dimension), then one merge
// pass per power of two below the size (5 -> widths 1, 2, 4), each a loop over the other
// dimension and the positions of a row, carrying the read positions of the left and right
// runs, the next permutation and the keys in that order. The right key wins only when it
// is less: olt, or a number against a NaN left key (NaN last, -0.0 == +0.0, stable).
// CHECK-LABEL: func.func @test_sort_permutation
// CHECK-SAME:    (%[[KEYS:[a-zA-Z0-9_]+]]: tensor<2x5xf32>)
// CHECK:         %[[IOTA:[a-zA-Z0-9_]+]] = linalg.generic
// CHECK:           linalg.index 1 : index
// CHECK:         %[[P1:[a-zA-Z0-9_]+]]:2 = scf.for %[[ROW:[a-zA-Z0-9_]+]] = {{.*}} -> (tensor<2x5xi32>, tensor<2x5xf32>)
// CHECK:           %{{.*}}:4 = scf.for %[[K:[a-zA-Z0-9_]+]] = {{.*}} -> (index, index, tensor<2x5xi32>, tensor<2x5xf32>)
// CHECK:             %[[LEFT:[a-zA-Z0-9_]+]] = tensor.extract %[[IOTA]][%[[ROW]], %[[I:[a-zA-Z0-9_]+]]] : tensor<2x5xi32>
// CHECK:             %[[RIGHT:[a-zA-Z0-9_]+]] = tensor.extract %[[IOTA]][%[[ROW]], %[[J:[a-zA-Z0-9_]+]]] : tensor<2x5xi32>
// CHECK:             %[[KL:[a-zA-Z0-9_]+]] = tensor.extract %[[KEYS]][%[[ROW]], %[[I]]] : tensor<2x5xf32>
// CHECK:             %[[KR:[a-zA-Z0-9_]+]] = tensor.extract %[[KEYS]][%[[ROW]], %[[J]]] : tensor<2x5xf32>
// CHECK:             arith.cmpf ord, %[[KR]], %[[KR]] : f32
// CHECK:             arith.cmpf uno, %[[KL]], %[[KL]] : f32
// CHECK:             arith.cmpf olt, %[[KR]], %[[KL]] : f32
// CHECK:             arith.xori
// CHECK:             arith.ori
// CHECK:             %[[TAKE:[a-zA-Z0-9_]+]] = arith.andi
// CHECK:             %[[V:[a-zA-Z0-9_]+]] = arith.select %[[TAKE]], %[[LEFT]], %[[RIGHT]] : i32
// CHECK:             tensor.insert %[[V]] into %{{.*}}[%[[ROW]], %[[K]]] : tensor<2x5xi32>
// CHECK:             %[[KV:[a-zA-Z0-9_]+]] = arith.select %[[TAKE]], %[[KL]], %[[KR]] : f32
// CHECK:             tensor.insert %[[KV]] into %{{.*}}[%[[ROW]], %[[K]]] : tensor<2x5xf32>
// CHECK:         %[[P2:[a-zA-Z0-9_]+]]:2 = scf.for
// CHECK:           tensor.extract %[[P1]]#0
// CHECK:           tensor.extract %[[P1]]#1
// CHECK:         %[[P3:[a-zA-Z0-9_]+]]:2 = scf.for
// CHECK:           tensor.extract %[[P2]]#0
// CHECK-NOT:     scf.for
// CHECK:         return %[[P3]]#0 : tensor<2x5xi32>
func.func @test_sort_permutation(%x: tensor<2x5xf32>) -> tensor<2x5xi32> {
  %0 = "mlax.sort_permutation"(%x) {dimension = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xi32>
  return %0 : tensor<2x5xi32>
}

// Unsigned keys compare with ult; a size-1 dimension is already sorted (the iota alone).
// CHECK-LABEL: func.func @test_sort_unsigned
// CHECK:         arith.cmpi ult, %{{.*}}, %{{.*}} : i8
// CHECK-LABEL: func.func @test_sort_single
// CHECK-NOT:     scf.for
// CHECK:         return
func.func @test_sort_unsigned(%x: tensor<3xui8>) -> tensor<3xi32> {
  %0 = "mlax.sort_permutation"(%x) {dimension = 0 : i64} : (tensor<3xui8>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}
func.func @test_sort_single(%x: tensor<1x4xi32>) -> tensor<1x4xi32> {
  %0 = "mlax.sort_permutation"(%x) {dimension = 0 : i64} : (tensor<1x4xi32>) -> tensor<1x4xi32>
  return %0 : tensor<1x4xi32>
}

// apply_permutation: a linalg.generic reading the operand at the clamped index along the
// dimension and its own coordinates elsewhere.
// CHECK-LABEL: func.func @test_apply_permutation
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x5xf32>, %[[P:[a-zA-Z0-9_]+]]: tensor<2x5xi32>)
// CHECK:         linalg.generic {{.*}} ins(%[[P]] : tensor<2x5xi32>)
// CHECK:           ^bb0(%[[I:[a-zA-Z0-9_]+]]: i32, %{{.*}}: f32):
// CHECK:             %[[AT:[a-zA-Z0-9_]+]] = arith.index_cast %[[I]] : i32 to index
// CHECK:             %[[LOW:[a-zA-Z0-9_]+]] = arith.maxsi %[[AT]], %{{.*}} : index
// CHECK:             %[[J:[a-zA-Z0-9_]+]] = arith.minsi %[[LOW]], %{{.*}} : index
// CHECK:             %[[R:[a-zA-Z0-9_]+]] = linalg.index 0 : index
// CHECK:             %[[E:[a-zA-Z0-9_]+]] = tensor.extract %[[X]][%[[R]], %[[J]]] : tensor<2x5xf32>
// CHECK:             linalg.yield %[[E]] : f32
func.func @test_apply_permutation(%x: tensor<2x5xf32>, %p: tensor<2x5xi32>) -> tensor<2x5xf32> {
  %0 = "mlax.apply_permutation"(%x, %p) {dimension = 1 : i64} : (tensor<2x5xf32>, tensor<2x5xi32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// top_k: an integer key whose ascending order is XLA's TopK order (float bits, the non-sign
// bits of negatives flipped, then negated), merge-sorted like sort_permutation; the first
// k positions of each row are the indices, and the values are read there.
// CHECK-LABEL: func.func @test_top_k
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x5xf32>)
// CHECK:         %[[KEYS:[a-zA-Z0-9_]+]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x5xf32>) outs(%{{.*}} : tensor<2x5xi32>)
// CHECK:           %[[BITS:[a-zA-Z0-9_]+]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK:           %[[SIGN:[a-zA-Z0-9_]+]] = arith.shrsi %[[BITS]], %{{.*}} : i32
// CHECK:           %[[MASK:[a-zA-Z0-9_]+]] = arith.andi %[[SIGN]], %{{.*}} : i32
// CHECK:           %[[FLIP:[a-zA-Z0-9_]+]] = arith.xori %[[BITS]], %[[MASK]] : i32
// CHECK:           %[[KEY:[a-zA-Z0-9_]+]] = arith.xori %[[FLIP]], %{{.*}} : i32
// CHECK:           linalg.yield %[[KEY]] : i32
// CHECK:         scf.for
// CHECK:           tensor.extract %[[KEYS]]
// CHECK:           arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK:         scf.for
// CHECK:         %[[LAST:[a-zA-Z0-9_]+]]:2 = scf.for
// CHECK:         %[[I:[a-zA-Z0-9_]+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xi32>)
// CHECK:           tensor.extract %[[LAST]]#0[%{{.*}}, %{{.*}}] : tensor<2x5xi32>
// CHECK:         %[[V:[a-zA-Z0-9_]+]] = linalg.generic {{.*}} ins(%[[I]] : tensor<2x3xi32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK:           tensor.extract %[[X]]
// CHECK:         return %[[V]], %[[I]] : tensor<2x3xf32>, tensor<2x3xi32>
func.func @test_top_k(%x: tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>) {
  %0:2 = "mlax.top_k"(%x) {k = 3 : i64} : (tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xi32>
}
