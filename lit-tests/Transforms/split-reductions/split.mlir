// RUN: %mlax-opt --mlax-split-reductions --split-input-file %s | FileCheck %s
// RUN: %mlax-opt --mlax-split-reductions --split-input-file %s | %mlir-opt --split-input-file > /dev/null

#id1 = affine_map<(d0) -> (d0)>
#scalar1 = affine_map<(d0) -> ()>

// A sum of 8192 contiguous f32 values (a vectorized run: 32 per lane x 16 lanes per block)
// becomes 16 blocks of 512 and a sum of the 16 partial results.
// CHECK-LABEL: func.func @test_full_sum
// CHECK:         %[[INIT:.*]] = linalg.fill
// CHECK:         %[[BLOCKS:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1]] output_shape [16, 512] : tensor<8192xf32> into tensor<16x512xf32>
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[PARTIAL_INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<16xf32>)
// CHECK:         %[[PARTIAL:.*]] = linalg.generic {{{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[BLOCKS]] : tensor<16x512xf32>) outs(%[[PARTIAL_INIT]] : tensor<16xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf %{{.*}}, %{{.*}} fastmath<reassoc>
// CHECK:         %[[SUM:.*]] = linalg.generic {{{.*}}iterator_types = ["reduction"]} ins(%[[PARTIAL]] : tensor<16xf32>) outs(%[[INIT]] : tensor<f32>)
// CHECK:           arith.addf %{{.*}}, %{{.*}} fastmath<reassoc>
// CHECK:         return %[[SUM]]
func.func @test_full_sum(%x: tensor<8192xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id1, #scalar1], iterator_types = ["reduction"]}
      ins(%x : tensor<8192xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %sum : tensor<f32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A column sum (the reduction is the outer loop, not vectorized along it: runs of 32):
// 1000 rows become 31 blocks of 32 rows and a tail of 8 rows, which starts the final sum.
// CHECK-LABEL: func.func @test_column_sum_with_tail
// CHECK:         %[[INIT:.*]] = linalg.fill
// CHECK:         %[[TAIL_ROWS:.*]] = tensor.extract_slice %arg0[992, 0] [8, 8] [1, 1] : tensor<1000x8xf32> to tensor<8x8xf32>
// CHECK:         %[[TAIL:.*]] = linalg.generic {{{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[TAIL_ROWS]] : tensor<8x8xf32>) outs(%[[INIT]] : tensor<8xf32>)
// CHECK:         %[[HEAD:.*]] = tensor.extract_slice %arg0[0, 0] [992, 8] [1, 1] : tensor<1000x8xf32> to tensor<992x8xf32>
// CHECK:         %[[BLOCKS:.*]] = tensor.expand_shape %[[HEAD]] {{\[\[}}0, 1], [2]] output_shape [31, 32, 8] : tensor<992x8xf32> into tensor<31x32x8xf32>
// CHECK:         %[[PARTIAL:.*]] = linalg.generic {{{.*}}iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[BLOCKS]] : tensor<31x32x8xf32>) outs(%{{.*}} : tensor<31x8xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {{{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[PARTIAL]] : tensor<31x8xf32>) outs(%[[TAIL]] : tensor<8xf32>)
// CHECK:         return %[[SUM]]
func.func @test_column_sum_with_tail(%x: tensor<1000x8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<1000x8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %sum : tensor<8xf32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>
#bcast = affine_map<(d0) -> (0)>
#scalar1 = affine_map<(d0) -> ()>

// A fused producer that reads a broadcast size-1 operand (the mean of a variance) and the
// loop index: the broadcast keeps its constant index, linalg.index becomes the position in
// the unsplit loop (block * 512 + index within it).
// CHECK-LABEL: func.func @test_broadcast_and_index
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[BCAST:.*]], #{{.*}}], iterator_types = ["parallel", "reduction"]}
// CHECK:           %[[BLOCK:.*]] = linalg.index 0 : index
// CHECK:           %[[WITHIN:.*]] = linalg.index 1 : index
// CHECK:           %[[SCALED:.*]] = arith.muli %[[BLOCK]], %{{.*}} : index
// CHECK:           arith.addi %[[SCALED]], %[[WITHIN]] : index
func.func @test_broadcast_and_index(%x: tensor<16384xf32>, %mean: tensor<1xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id1, #bcast, #scalar1], iterator_types = ["reduction"]}
      ins(%x, %mean : tensor<16384xf32>, tensor<1xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %m: f32, %acc: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %d = arith.subf %in, %m : f32
    %w = arith.mulf %d, %fi : f32
    %s = arith.addf %w, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %sum : tensor<f32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>
#scalar1 = affine_map<(d0) -> ()>

// No change: a run of 512 contiguous values fits (32 per vector lane).
// CHECK-LABEL: func.func @test_no_split_short
// CHECK-NOT:     tensor.expand_shape
// CHECK-NOT:     tensor.extract_slice
func.func @test_no_split_short(%x: tensor<512xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id1, #scalar1], iterator_types = ["reduction"]}
      ins(%x : tensor<512xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %sum : tensor<f32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>
#scalar1 = affine_map<(d0) -> ()>

// No change: without fastmath<reassoc> the order of the additions is the program's.
// CHECK-LABEL: func.func @test_no_split_ordered
// CHECK-NOT:     tensor.expand_shape
func.func @test_no_split_ordered(%x: tensor<65536xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id1, #scalar1], iterator_types = ["reduction"]}
      ins(%x : tensor<65536xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %sum : tensor<f32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>
#scalar1 = affine_map<(d0) -> ()>

// No change: an integer sum is exact in any order, and a maximum never rounds.
// CHECK-LABEL: func.func @test_no_split_integer_or_max
// CHECK-NOT:     tensor.expand_shape
func.func @test_no_split_integer_or_max(%x: tensor<65536xi32>, %y: tensor<65536xf32>) -> (tensor<i32>, tensor<f32>) {
  %zero = arith.constant 0 : i32
  %empty = tensor.empty() : tensor<i32>
  %init = linalg.fill ins(%zero : i32) outs(%empty : tensor<i32>) -> tensor<i32>
  %sum = linalg.generic {indexing_maps = [#id1, #scalar1], iterator_types = ["reduction"]}
      ins(%x : tensor<65536xi32>) outs(%init : tensor<i32>) {
  ^bb0(%in: i32, %acc: i32):
    %s = arith.addi %in, %acc : i32
    linalg.yield %s : i32
  } -> tensor<i32>
  %low = arith.constant 0xFF800000 : f32
  %fempty = tensor.empty() : tensor<f32>
  %finit = linalg.fill ins(%low : f32) outs(%fempty : tensor<f32>) -> tensor<f32>
  %max = linalg.generic {indexing_maps = [#id1, #scalar1], iterator_types = ["reduction"]}
      ins(%y : tensor<65536xf32>) outs(%finit : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %sum, %max : tensor<i32>, tensor<f32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>
#reversed = affine_map<(d0) -> (-d0 + 65535)>
#scalar1 = affine_map<(d0) -> ()>

// A dot of a vector with its reverse (a fused jnp.flip): the plain operand is cut into blocks,
// the reversed one keeps its buffer and reads it at the position in the unsplit loop.
// CHECK: #[[$REV:map[0-9]*]] = affine_map<(d0, d1) -> (d0 * -512 - d1 + 65535)>
// CHECK-LABEL: func.func @test_expression_operand
// CHECK:         %[[BLOCKS:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1]] output_shape [128, 512]
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[$REV]], #{{.*}}], iterator_types = ["parallel", "reduction"]} ins(%[[BLOCKS]], %arg0 : tensor<128x512xf32>, tensor<65536xf32>)
func.func @test_expression_operand(%x: tensor<65536xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>) -> tensor<f32>
  %dot = linalg.generic {indexing_maps = [#id1, #reversed, #scalar1], iterator_types = ["reduction"]}
      ins(%x, %x : tensor<65536xf32>, tensor<65536xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %p, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %dot : tensor<f32>
}
