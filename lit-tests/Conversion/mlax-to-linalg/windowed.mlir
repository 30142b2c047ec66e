// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-cpu-pipeline{to=buffers})' %s | FileCheck %s --check-prefix=GEMM

// conv_general_dilated on floats is im2col: per group (one here), a named
// linalg.batch_matmul of the patches [G, N*S, K] by the rhs as [G, K, O/G] (which
// mlax-linalg-to-blas hands to gemm). The patches are copied over the unflattened (group,
// batch, output position..., window...) space, which an empty tensor bounds: the read is a
// plain `out * stride + offset * rhs_dilation`, the write flattens (row, column). The rhs and
// the result are copying generics whose maps unflatten (floordiv / mod) or flatten indices.
// None is a permutation copy, so no reshape propagation or elementwise fusion folds the
// gather into the product. NHWC x HWIO here; the dimension numbers are all in the maps.
// CHECK-DAG:   #[[$PATCH:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2 * 2 + d4, d3 + d5 * 2, d6)>
// CHECK-DAG:   #[[$SPACE:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4, d5, d6)>
// CHECK-DAG:   #[[$FLAT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d1 * 3 + d2) * 4 + d3, (d4 * 2 + d5) * 3 + d6)>
// CHECK-DAG:   #[[$WEIGHTS:.*]] = affine_map<(d0, d1, d2) -> ((d1 floordiv 6) mod 3, (d1 floordiv 3) mod 2, d1 mod 3, d0 * 4 + d2)>
// CHECK-DAG:   #[[$ROWS:.*]] = affine_map<(d0, d1, d2, d3) -> (0, (d0 * 3 + d1) * 4 + d2, d3)>
// CHECK-DAG:   #[[$GPATCH:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0 * 2 + d3, d2 + d4)>
// CHECK-DAG:   #[[$GWEIGHTS:.*]] = affine_map<(d0, d1, d2) -> (d0 * 3 + d2, (d1 floordiv 3) mod 2, d1 mod 3)>
// CHECK-DAG:   #[[$GROWS:.*]] = affine_map<(d0, d1, d2) -> (d1 floordiv 3, d0 * 9 + d2, d1 mod 3)>
// CHECK-DAG:   #[[$IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0 * 2 + d2, d1 + d3 * 2)>
// CHECK-DAG:   #[[$WIN:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG:   #[[$RES:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG:   #[[$KPATCH:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2 + d4, d3 + d5, d6)>
// CHECK-DAG:   #[[$KFLAT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d1 * 3 + d2) * 3 + d3, (d4 * 3 + d5) * 3 + d6)>
// CHECK-DAG:   #[[$AT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG:   #[[$B:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG:   #[[$C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @test_conv_nhwc
// CHECK:         %[[SPACE:.*]] = tensor.empty() : tensor<1x2x3x4x3x2x3xf32>
// CHECK:         %[[P:.*]] = linalg.generic {indexing_maps = [#[[$PATCH]], #[[$SPACE]], #[[$FLAT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %[[SPACE]] : tensor<2x7x6x3xf32>, tensor<1x2x3x4x3x2x3xf32>) outs(%{{.*}} : tensor<1x24x18xf32>)
// CHECK:         %[[W:.*]] = linalg.generic {indexing_maps = [#[[$WEIGHTS]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg1 : tensor<3x2x3x4xf32>) outs(%{{.*}} : tensor<1x18x4xf32>)
// CHECK:         %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x24x4xf32>)
// CHECK:         %[[MM:.*]] = linalg.batch_matmul ins(%[[P]], %[[W]] : tensor<1x24x18xf32>, tensor<1x18x4xf32>) outs(%[[ZERO]] : tensor<1x24x4xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[$ROWS]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[MM]] : tensor<1x24x4xf32>) outs(%{{.*}} : tensor<2x3x4x4xf32>)

// Through the CPU pipeline the product stays a gemm (M = 24 rows, N = 4, K = 18).
// GEMM-LABEL: func.func @jit.test_conv_nhwc
// GEMM:         call @mlax_sgemm({{.*}}, %c24_i64, %c4_i64, %c18_i64,
func.func @test_conv_nhwc(%x: tensor<2x7x6x3xf32>, %w: tensor<3x2x3x4xf32>) -> tensor<2x3x4x4xf32> {
  %0 = "mlax.conv_general_dilated"(%x, %w) {window_strides = array<i64: 2, 1>, padding = array<i64: 0, 0, 0, 0>, lhs_dilation = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 2>, lhs_spec = array<i64: 0, 3, 1, 2>, rhs_spec = array<i64: 3, 2, 0, 1>, out_spec = array<i64: 0, 3, 1, 2>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<2x7x6x3xf32>, tensor<3x2x3x4xf32>) -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// A kernel gradient (x's features are the rows: the lhs's minor dimension is its batch role):
// the patches are stored transposed, [G, K, N*S] over (group, batch, output position...,
// window..., feature), so the copy reads x and writes the patches along their minor
// dimensions, and the product reads them as A^T (gemm's transpose flag for A, 112).
// CHECK-LABEL: func.func @test_conv_kernel_gradient
// CHECK:         %[[P:.*]] = linalg.generic {indexing_maps = [#[[$KPATCH]], #{{.*}}, #[[$KFLAT]]], {{.*}} outs(%{{.*}} : tensor<1x18x27xf32>)
// CHECK:         linalg.batch_matmul indexing_maps = [#[[$AT]], #[[$B]], #[[$C]]] ins(%[[P]], %{{.*}} : tensor<1x18x27xf32>, tensor<1x18x4xf32>) outs(%{{.*}} : tensor<1x27x4xf32>)
// GEMM-LABEL: func.func @jit.test_conv_kernel_gradient
// GEMM:         call @mlax_sgemm(%c101_i32, %c112_i32, %c111_i32, %c27_i64, %c4_i64, %c18_i64,
func.func @test_conv_kernel_gradient(%x: tensor<2x5x5x3xf32>, %dy: tensor<2x3x3x4xf32>) -> tensor<3x3x3x4xf32> {
  %0 = "mlax.conv_general_dilated"(%x, %dy) {window_strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, lhs_dilation = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 1>, lhs_spec = array<i64: 3, 0, 1, 2>, rhs_spec = array<i64: 3, 0, 1, 2>, out_spec = array<i64: 2, 3, 0, 1>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<2x5x5x3xf32>, tensor<2x3x3x4xf32>) -> tensor<3x3x3x4xf32>
  return %0 : tensor<3x3x3x4xf32>
}

// Padding and lhs dilation first (mlax.pad's lowering: a generic over the padded shape that
// reads the operand where an element lands, else 0); feature groups index the lhs features at
// `g * I + i` and the rhs output features at `g * O/G + o`, and the result's feature f reads
// group `f floordiv (O/G)`; f16 accumulates in f32 and rounds once.
// CHECK-LABEL: func.func @test_conv_groups_padding
// CHECK:         arith.extf
// CHECK:         %[[PAD:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x4x11xf32>)
// CHECK:           tensor.extract
// CHECK:           arith.select
// CHECK:         %[[P:.*]] = linalg.generic {indexing_maps = [#[[$GPATCH]], #{{.*}}, #{{.*}}], {{.*}} ins(%[[PAD]], %{{.*}} : tensor<1x4x11xf32>, tensor<2x1x9x2x3xf32>) outs(%{{.*}} : tensor<2x9x6xf32>)
// CHECK:         %[[W:.*]] = linalg.generic {indexing_maps = [#[[$GWEIGHTS]], #{{.*}}], {{.*}} outs(%{{.*}} : tensor<2x6x3xf32>)
// CHECK:         %[[MM:.*]] = linalg.batch_matmul ins(%[[P]], %[[W]] : tensor<2x9x6xf32>, tensor<2x6x3xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[$GROWS]], #{{.*}}], {{.*}} ins(%[[MM]] : tensor<2x9x3xf32>) outs(%{{.*}} : tensor<1x6x9xf32>)
// CHECK:         arith.truncf %{{.*}} : f32 to f16
func.func @test_conv_groups_padding(%x: tensor<1x4x5xf16>, %w: tensor<6x2x3xf16>) -> tensor<1x6x9xf16> {
  %0 = "mlax.conv_general_dilated"(%x, %w) {window_strides = array<i64: 1>, padding = array<i64: 1, 1>, lhs_dilation = array<i64: 2>, rhs_dilation = array<i64: 1>, lhs_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, feature_group_count = 2 : i64, batch_group_count = 1 : i64} : (tensor<1x4x5xf16>, tensor<6x2x3xf16>) -> tensor<1x6x9xf16>
  return %0 : tensor<1x6x9xf16>
}

// Integers are one direct generic over (batch, group, output feature, output spatial, input
// feature, window), wrapping in their own type: groups split the lhs feature, rhs output
// feature and result feature dimensions into (groups, size / groups) in place.
// CHECK-LABEL: func.func @test_conv_int_groups
// CHECK:         %[[L:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2], [3]] output_shape [1, 2, 2, 5]
// CHECK:         %[[R:.*]] = tensor.expand_shape %arg1 {{\[\[}}0, 1], [2], [3]] output_shape [2, 3, 2, 3]
// CHECK:         %[[G:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[L]], %[[R]] : tensor<1x2x2x5xi32>, tensor<2x3x2x3xi32>) outs(%{{.*}} : tensor<1x2x3x3xi32>)
// CHECK:           arith.muli
// CHECK:           arith.addi
// CHECK:         tensor.collapse_shape %[[G]] {{\[\[}}0], [1, 2], [3]] : tensor<1x2x3x3xi32> into tensor<1x6x3xi32>
func.func @test_conv_int_groups(%x: tensor<1x4x5xi32>, %w: tensor<6x2x3xi32>) -> tensor<1x6x3xi32> {
  %0 = "mlax.conv_general_dilated"(%x, %w) {window_strides = array<i64: 1>, padding = array<i64: 0, 0>, lhs_dilation = array<i64: 1>, rhs_dilation = array<i64: 1>, lhs_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, feature_group_count = 2 : i64, batch_group_count = 1 : i64} : (tensor<1x4x5xi32>, tensor<6x2x3xi32>) -> tensor<1x6x3xi32>
  return %0 : tensor<1x6x3xi32>
}

// reduce_window_*: a generic over (result..., window...) reading the padded operand at
// `out * stride + offset * window_dilation` and a tensor.empty of the window's shape (the
// window loops' bounds); the output starts as the identity, which also fills the padding
// (maps $IN, $WIN, $RES above).
// CHECK-LABEL: func.func @test_reduce_window_max
// CHECK:         %[[PAD:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<5x6xf32>)
// CHECK:         %[[WINDOW:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK:         %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[NEG]] : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[$IN]], #[[$WIN]], #[[$RES]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME:      ins(%[[PAD]], %[[WINDOW]] : tensor<5x6xf32>, tensor<2x2xf32>) outs(%[[INIT]] : tensor<2x4xf32>)
// CHECK:           arith.maximumf
func.func @test_reduce_window_max(%x: tensor<4x6xf32>) -> tensor<2x4xf32> {
  %0 = "mlax.reduce_window_max"(%x) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 1>, padding = array<i64: 1, 0, 0, 0>, base_dilation = array<i64: 1, 1>, window_dilation = array<i64: 1, 2>} : (tensor<4x6xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// Integer sums wrap in their own type; unsigned max starts at 0 and compares unsigned;
// booleans accumulate in i8 and truncate.
// CHECK-LABEL: func.func @test_reduce_window_kinds
// CHECK:         arith.addi
// CHECK:         arith.maxui
// CHECK:         arith.extui %{{.*}} : i1 to i8
// CHECK:         arith.minsi
// CHECK:         arith.trunci %{{.*}} : i8 to i1
func.func @test_reduce_window_kinds(%i: tensor<5xi32>, %u: tensor<5xui8>, %b: tensor<5xi1>) -> (tensor<4xi32>, tensor<4xui8>, tensor<4xi1>) {
  %0 = "mlax.reduce_window_sum"(%i) {window_dimensions = array<i64: 2>, window_strides = array<i64: 1>, padding = array<i64: 0, 0>, base_dilation = array<i64: 1>, window_dilation = array<i64: 1>} : (tensor<5xi32>) -> tensor<4xi32>
  %1 = "mlax.reduce_window_max"(%u) {window_dimensions = array<i64: 2>, window_strides = array<i64: 1>, padding = array<i64: 0, 0>, base_dilation = array<i64: 1>, window_dilation = array<i64: 1>} : (tensor<5xui8>) -> tensor<4xui8>
  %2 = "mlax.reduce_window_min"(%b) {window_dimensions = array<i64: 2>, window_strides = array<i64: 1>, padding = array<i64: 0, 0>, base_dilation = array<i64: 1>, window_dilation = array<i64: 1>} : (tensor<5xi1>) -> tensor<4xi1>
  return %0, %1, %2 : tensor<4xi32>, tensor<4xui8>, tensor<4xi1>
}
