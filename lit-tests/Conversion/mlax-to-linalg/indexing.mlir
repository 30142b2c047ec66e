// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null

// gather: a linalg.generic over the result; each start index element is read from the
// indices at the result's batch coordinate, extended to i64, clamped into [0, dim - size]
// and added to the window offset; the operand is read with tensor.extract.
// CHECK-LABEL: func.func @test_gather
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<3x4xf32>)
// CHECK:           %[[B:.*]] = linalg.index 0 : index
// CHECK:           %[[O:.*]] = linalg.index 1 : index
// CHECK:           %[[I:.*]] = tensor.extract %arg1[%[[B]], %c0] : tensor<3x1xi32>
// CHECK:           %[[W:.*]] = arith.extsi %[[I]] : i32 to i64
// CHECK:           %[[LO:.*]] = arith.maxsi %[[W]], %c0_i64
// CHECK:           %[[HI:.*]] = arith.minsi %[[LO]], %c4_i64
// CHECK:           %[[S:.*]] = arith.index_cast %[[HI]] : i64 to index
// CHECK:           %[[V:.*]] = tensor.extract %arg0[%[[S]], %[[O]]] : tensor<5x4xf32>
// CHECK:           linalg.yield %[[V]] : f32
func.func @test_gather(%x: tensor<5x4xf32>, %i: tensor<3x1xi32>) -> tensor<3x4xf32> {
  %0 = "mlax.gather"(%x, %i) {offset_dims = array<i64: 1>, collapsed_slice_dims = array<i64: 0>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1, 4>, mode = "clip"} : (tensor<5x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// mode "fill": a window whose start did not fit reads the fill value (NaN for floats).
// CHECK-LABEL: func.func @test_gather_fill
// CHECK:         linalg.generic
// CHECK:           %[[GE:.*]] = arith.cmpi sge
// CHECK:           %[[LE:.*]] = arith.cmpi sle
// CHECK:           %[[FITS:.*]] = arith.andi %[[GE]], %[[LE]] : i1
// CHECK:           %[[V:.*]] = tensor.extract %arg0
// CHECK:           %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK:           arith.select %[[FITS]], %[[V]], %[[NAN]] : f32
func.func @test_gather_fill(%x: tensor<5xf32>, %i: tensor<2xi32>) -> tensor<2x2xf32> {
  %0 = "mlax.gather"(%x, %i) {offset_dims = array<i64: 1>, collapsed_slice_dims = array<i64>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 2>, mode = "fill"} : (tensor<5xf32>, tensor<2xi32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// Batching dimensions start at the batch coordinate itself (no index read for them).
// CHECK-LABEL: func.func @test_gather_batching
// CHECK:         linalg.generic
// CHECK:           %[[B:.*]] = linalg.index 0 : index
// CHECK:           tensor.extract %arg1[%[[B]]] : tensor<3xi8>
// CHECK:           %[[C:.*]] = arith.minui %{{.*}}, %c3_i64
// CHECK:           %[[S:.*]] = arith.index_cast %[[C]]
// CHECK:           tensor.extract %arg0[%[[B]], %[[S]]] : tensor<3x4xi16>
func.func @test_gather_batching(%x: tensor<3x4xi16>, %i: tensor<3xui8>) -> tensor<3xi16> {
  %0 = "mlax.gather"(%x, %i) {offset_dims = array<i64>, collapsed_slice_dims = array<i64: 1>, operand_batching_dims = array<i64: 0>, start_indices_batching_dims = array<i64: 0>, start_index_map = array<i64: 1>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1, 1>, mode = "promise_in_bounds"} : (tensor<3x4xi16>, tensor<3xui8>) -> tensor<3xi16>
  return %0 : tensor<3xi16>
}

// scatter_add: scf.for loops over the updates carry the result, which starts as the operand;
// each update element is combined with the old value (old, new: XLA's order) at its position,
// and a dropped window ("fill") writes the old value back.
// CHECK-LABEL: func.func @test_scatter_add
// CHECK:         %[[R:.*]] = scf.for %[[U0:.*]] = %c0 to %c3 step %c1 iter_args(%[[ACC0:.*]] = %arg0) -> (tensor<5x4xf32>)
// CHECK:           scf.for %[[U1:.*]] = %c0 to %c4 step %c1 iter_args(%[[ACC:.*]] = %[[ACC0]]) -> (tensor<5x4xf32>)
// CHECK:             tensor.extract %arg1[%[[U0]], %c0{{.*}}] : tensor<3x1xi32>
// CHECK:             %[[FITS:.*]] = arith.andi
// CHECK:             %[[NEW:.*]] = tensor.extract %arg2[%[[U0]], %[[U1]]] : tensor<3x4xf32>
// CHECK:             %[[OLD:.*]] = tensor.extract %[[ACC]]
// CHECK:             %[[SUM:.*]] = arith.addf %[[OLD]], %[[NEW]] : f32
// CHECK:             %[[KEEP:.*]] = arith.select %[[FITS]], %[[SUM]], %[[OLD]] : f32
// CHECK:             tensor.insert %[[KEEP]] into %[[ACC]]
// CHECK:         return %[[R]]
func.func @test_scatter_add(%x: tensor<5x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x4xf32>) -> tensor<5x4xf32> {
  %0 = "mlax.scatter_add"(%x, %i, %u) {update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "fill"} : (tensor<5x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// scatter with mode "clip" writes the update at the clamped position unconditionally.
// CHECK-LABEL: func.func @test_scatter_clip
// CHECK:         scf.for
// CHECK:           %[[NEW:.*]] = tensor.extract %arg2
// CHECK-NEXT:      tensor.insert %[[NEW]] into
// CHECK-NOT:       arith.select
func.func @test_scatter_clip(%x: tensor<5xi32>, %i: tensor<2x1xi64>, %u: tensor<2xi32>) -> tensor<5xi32> {
  %0 = "mlax.scatter"(%x, %i, %u) {update_window_dims = array<i64>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "clip"} : (tensor<5xi32>, tensor<2x1xi64>, tensor<2xi32>) -> tensor<5xi32>
  return %0 : tensor<5xi32>
}

// Booleans scatter in i8 (max as or), converted at both ends; empty updates leave the operand.
// CHECK-LABEL: func.func @test_scatter_bool
// CHECK:         arith.extui %{{.*}} : i1 to i8
// CHECK:         scf.for
// CHECK:           arith.ori %{{.*}}, %{{.*}} : i8
// CHECK:         arith.trunci %{{.*}} : i8 to i1
// CHECK:         return
func.func @test_scatter_bool(%x: tensor<4xi1>, %i: tensor<2x1xi32>, %u: tensor<2xi1>) -> tensor<4xi1> {
  %0 = "mlax.scatter_max"(%x, %i, %u) {update_window_dims = array<i64>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "fill"} : (tensor<4xi1>, tensor<2x1xi32>, tensor<2xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// CHECK-LABEL: func.func @test_scatter_empty
// CHECK-NEXT:    return %arg0
func.func @test_scatter_empty(%x: tensor<4xf32>, %i: tensor<0x1xi32>, %u: tensor<0xf32>) -> tensor<4xf32> {
  %0 = "mlax.scatter_mul"(%x, %i, %u) {update_window_dims = array<i64>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "fill"} : (tensor<4xf32>, tensor<0x1xi32>, tensor<0xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
