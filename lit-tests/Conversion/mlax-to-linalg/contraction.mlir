// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null

// The indexing maps of transposed operands (@test_transposed_operands).
// CHECK-DAG:   #[[$KM:[a-z0-9]+]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG:   #[[$KN:[a-z0-9]+]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG:   #[[$NK:[a-z0-9]+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG:   #[[$MN:[a-z0-9]+]] = affine_map<(d0, d1, d2) -> (d0, d1)>

// dot_general: operands in canonical layout (batch, M, K) x (batch, K, N) feed the named
// linalg.matmul / linalg.batch_matmul over a zero linalg.fill; the product has the
// result's layout, so it is only regrouped back.

// Already row-major matrices: no transpose, no reshape.
// CHECK-LABEL: func.func @test_matmul
// CHECK-SAME:    (%[[A:[-a-zA-Z0-9_]+]]: tensor<2x3xf32>, %[[B:[-a-zA-Z0-9_]+]]: tensor<3x4xf32>)
// CHECK:         %[[ZERO:[-a-zA-Z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[INIT:[-a-zA-Z0-9_]+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:         %[[C:[-a-zA-Z0-9_]+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<2x3xf32>, tensor<3x4xf32>) outs(%[[INIT]] : tensor<2x4xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         return %[[C]]
func.func @test_matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "mlax.dot_general"(%a, %b) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = f32} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// Transposed matrices are read as they are: x^T @ g (the weight gradient of x @ w) reads x
// as (K, M), and g @ w^T, whose w^T is an mlax.transpose, reads w itself as (N, K); neither
// operand is copied (mlax-linalg-to-blas passes BLAS's transpose flags).
// CHECK-LABEL: func.func @test_transposed_operands
// CHECK-SAME:    (%[[X:[-a-zA-Z0-9_]+]]: tensor<5x2xf32>, %[[G:[-a-zA-Z0-9_]+]]: tensor<5x3xf32>, %[[W:[-a-zA-Z0-9_]+]]: tensor<4x3xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.matmul indexing_maps = [#[[$KM]], #[[$KN]], #[[$MN]]] ins(%[[X]], %[[G]] : tensor<5x2xf32>, tensor<5x3xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.matmul indexing_maps = [#{{.*}}, #[[$NK]], #[[$MN]]] ins(%[[G]], %[[W]] : tensor<5x3xf32>, tensor<4x3xf32>)
func.func @test_transposed_operands(%x: tensor<5x2xf32>, %g: tensor<5x3xf32>, %w: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<5x4xf32>) {
  %dw = "mlax.dot_general"(%x, %g) {lhs_contracting_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = f32} : (tensor<5x2xf32>, tensor<5x3xf32>) -> tensor<2x3xf32>
  %wt = "mlax.transpose"(%w) {permutation = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %dx = "mlax.dot_general"(%g, %wt) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = f32} : (tensor<5x3xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  return %dw, %dx : tensor<2x3xf32>, tensor<5x4xf32>
}

// The weight gradient as the transpose rule of dot_general writes it, transpose(g^T @ x):
// the product of the exchanged operands, x^T @ g, read in place (both as (K, M) / (K, N)),
// with no copy of the transpose; its batched form likewise exchanges the two matrices.
// CHECK-LABEL: func.func @test_transposed_product
// CHECK-SAME:    (%[[X:[-a-zA-Z0-9_]+]]: tensor<5x2xf32>, %[[G:[-a-zA-Z0-9_]+]]: tensor<5x3xf32>, %[[XB:[-a-zA-Z0-9_]+]]: tensor<4x5x2xf32>, %[[GB:[-a-zA-Z0-9_]+]]: tensor<4x5x3xf32>)
// CHECK:         %[[DW:[-a-zA-Z0-9_]+]] = linalg.matmul indexing_maps = [#[[$KM]], #[[$KN]], #[[$MN]]] ins(%[[X]], %[[G]] : tensor<5x2xf32>, tensor<5x3xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK:         %[[DWB:[-a-zA-Z0-9_]+]] = linalg.batch_matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[XB]], %[[GB]] : tensor<4x5x2xf32>, tensor<4x5x3xf32>) outs(%{{.*}} : tensor<4x2x3xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[DW]], %[[DWB]]
func.func @test_transposed_product(%x: tensor<5x2xf32>, %g: tensor<5x3xf32>, %xb: tensor<4x5x2xf32>, %gb: tensor<4x5x3xf32>) -> (tensor<2x3xf32>, tensor<4x2x3xf32>) {
  %gx = "mlax.dot_general"(%g, %x) {lhs_contracting_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = f32} : (tensor<5x3xf32>, tensor<5x2xf32>) -> tensor<3x2xf32>
  %dw = "mlax.transpose"(%gx) {permutation = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %gxb = "mlax.dot_general"(%gb, %xb) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 1>, lhs_batch_dimensions = array<i64: 0>, rhs_batch_dimensions = array<i64: 0>, result_dtype = f32} : (tensor<4x5x3xf32>, tensor<4x5x2xf32>) -> tensor<4x3x2xf32>
  %dwb = "mlax.transpose"(%gxb) {permutation = array<i64: 0, 2, 1>} : (tensor<4x3x2xf32>) -> tensor<4x2x3xf32>
  return %dw, %dwb : tensor<2x3xf32>, tensor<4x2x3xf32>
}

// A product read elsewhere too, or permuted otherwise (its batch moved), keeps its transpose:
// a copy (a generic reading through the permutation).
// CHECK-LABEL: func.func @test_no_transposed_product
// CHECK:         linalg.matmul
// CHECK:         linalg.generic
// CHECK:         linalg.batch_matmul
// CHECK:         linalg.generic
func.func @test_no_transposed_product(%x: tensor<5x2xf32>, %g: tensor<5x3xf32>, %xb: tensor<4x5x2xf32>, %gb: tensor<4x5x3xf32>) -> (tensor<3x2xf32>, tensor<2x3xf32>, tensor<3x4x2xf32>) {
  %gx = "mlax.dot_general"(%g, %x) {lhs_contracting_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = f32} : (tensor<5x3xf32>, tensor<5x2xf32>) -> tensor<3x2xf32>
  %dw = "mlax.transpose"(%gx) {permutation = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %gxb = "mlax.dot_general"(%gb, %xb) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 1>, lhs_batch_dimensions = array<i64: 0>, rhs_batch_dimensions = array<i64: 0>, result_dtype = f32} : (tensor<4x5x3xf32>, tensor<4x5x2xf32>) -> tensor<4x3x2xf32>
  %moved = "mlax.transpose"(%gxb) {permutation = array<i64: 1, 0, 2>} : (tensor<4x3x2xf32>) -> tensor<3x4x2xf32>
  return %gx, %dw, %moved : tensor<3x2xf32>, tensor<2x3xf32>, tensor<3x4x2xf32>
}

// Batch and contracting dimensions anywhere: each operand is transposed to (batch, free,
// contracting) / (batch, contracting, free), the contracting pair (3, 1) ~ (0, 3) keeping its
// order, and collapsed to 3-D.
// CHECK-LABEL: func.func @test_batch_matmul
// CHECK:         %[[LT:[-a-zA-Z0-9_]+]] = linalg.transpose ins(%{{.*}} : tensor<5x3x2x4xf64>) outs(%{{.*}} : tensor<5x2x4x3xf64>) permutation = [0, 2, 3, 1]
// CHECK:         %[[L:[-a-zA-Z0-9_]+]] = tensor.collapse_shape %[[LT]] {{\[}}[0], [1], [2, 3]] : tensor<5x2x4x3xf64> into tensor<5x2x12xf64>
// CHECK:         %[[RT:[-a-zA-Z0-9_]+]] = linalg.transpose ins(%{{.*}} : tensor<4x5x7x6x3xf64>) outs(%{{.*}} : tensor<5x4x3x7x6xf64>) permutation = [1, 0, 4, 2, 3]
// CHECK:         %[[R:[-a-zA-Z0-9_]+]] = tensor.collapse_shape %[[RT]] {{\[}}[0], [1, 2], [3, 4]] : tensor<5x4x3x7x6xf64> into tensor<5x12x42xf64>
// CHECK:         %[[INIT:[-a-zA-Z0-9_]+]] = linalg.fill
// CHECK:         %[[C:[-a-zA-Z0-9_]+]] = linalg.batch_matmul ins(%[[L]], %[[R]] : tensor<5x2x12xf64>, tensor<5x12x42xf64>) outs(%[[INIT]] : tensor<5x2x42xf64>)
// CHECK:         tensor.expand_shape %[[C]] {{\[}}[0], [1], [2, 3]] output_shape [5, 2, 7, 6] : tensor<5x2x42xf64> into tensor<5x2x7x6xf64>
func.func @test_batch_matmul(%a: tensor<5x3x2x4xf64>, %b: tensor<4x5x7x6x3xf64>) -> tensor<5x2x7x6xf64> {
  %0 = "mlax.dot_general"(%a, %b) {lhs_contracting_dimensions = array<i64: 3, 1>, rhs_contracting_dimensions = array<i64: 0, 4>, lhs_batch_dimensions = array<i64: 0>, rhs_batch_dimensions = array<i64: 1>, result_dtype = f64} : (tensor<5x3x2x4xf64>, tensor<4x5x7x6x3xf64>) -> tensor<5x2x7x6xf64>
  return %0 : tensor<5x2x7x6xf64>
}

// A vector . vector dot of halves: operands extf to f32 (the accumulator), become 1xK and
// Kx1 matrices, and the 1x1 product collapses to rank 0 before one truncf.
// CHECK-LABEL: func.func @test_vector_dot_f16
// CHECK:         arith.extf %{{.*}} : f16 to f32
// CHECK:         %[[L:[-a-zA-Z0-9_]+]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [1, 3] : tensor<3xf32> into tensor<1x3xf32>
// CHECK:         arith.extf %{{.*}} : f16 to f32
// CHECK:         %[[R:[-a-zA-Z0-9_]+]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [3, 1] : tensor<3xf32> into tensor<3x1xf32>
// CHECK:         %[[C:[-a-zA-Z0-9_]+]] = linalg.matmul ins(%[[L]], %[[R]] : tensor<1x3xf32>, tensor<3x1xf32>)
// CHECK:         %[[S:[-a-zA-Z0-9_]+]] = tensor.collapse_shape %[[C]] [] : tensor<1x1xf32> into tensor<f32>
// CHECK:         linalg.generic {{.*}} ins(%[[S]] : tensor<f32>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
func.func @test_vector_dot_f16(%a: tensor<3xf16>, %b: tensor<3xf16>) -> tensor<f16> {
  %0 = "mlax.dot_general"(%a, %b) {lhs_contracting_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = f16} : (tensor<3xf16>, tensor<3xf16>) -> tensor<f16>
  return %0 : tensor<f16>
}

// Integers convert to result_dtype first (int8 -> int32: extsi), then wrap in it. Booleans
// count in i32 and compare the count with 0 (or of ands).
// CHECK-LABEL: func.func @test_integer_and_bool
// CHECK:         arith.extsi %{{.*}} : i8 to i32
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xi32>, tensor<3x4xi32>)
// CHECK:         arith.extui %{{.*}} : i1 to i32
// CHECK:         %[[COUNT:[-a-zA-Z0-9_]+]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xi32>, tensor<3x4xi32>)
// CHECK:         linalg.generic {{.*}} ins(%[[COUNT]] : tensor<2x4xi32>)
// CHECK:           arith.cmpi ne, %{{.*}}, %{{.*}} : i32
func.func @test_integer_and_bool(%a: tensor<2x3xi8>, %b: tensor<3x4xi8>, %p: tensor<2x3xi1>, %q: tensor<3x4xi1>) -> (tensor<2x4xi32>, tensor<2x4xi1>) {
  %0 = "mlax.dot_general"(%a, %b) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = i32} : (tensor<2x3xi8>, tensor<3x4xi8>) -> tensor<2x4xi32>
  %1 = "mlax.dot_general"(%p, %q) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = i1} : (tensor<2x3xi1>, tensor<3x4xi1>) -> tensor<2x4xi1>
  return %0, %1 : tensor<2x4xi32>, tensor<2x4xi1>
}

// Unsigned operands zero-extend; the types are made signless at the end of the pass.
// CHECK-LABEL: func.func @test_unsigned
// CHECK:         arith.extui %{{.*}} : i8 to i32
// CHECK:         linalg.matmul
func.func @test_unsigned(%a: tensor<2x3xui8>, %b: tensor<3x4xui8>) -> tensor<2x4xui32> {
  %0 = "mlax.dot_general"(%a, %b) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = ui32} : (tensor<2x3xui8>, tensor<3x4xui8>) -> tensor<2x4xui32>
  return %0 : tensor<2x4xui32>
}

// Contracting over nothing gives zeros: a linalg.generic with no inputs, no matmul.
// CHECK-LABEL: func.func @test_empty_contraction
// CHECK-NOT:     linalg.matmul
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:           linalg.yield %{{.*}} : f32
func.func @test_empty_contraction(%a: tensor<2x0xf32>, %b: tensor<0x4xf32>) -> tensor<2x4xf32> {
  %0 = "mlax.dot_general"(%a, %b) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = f32} : (tensor<2x0xf32>, tensor<0x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
