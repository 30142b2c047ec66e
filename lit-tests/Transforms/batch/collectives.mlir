// RUN: %mlax-opt --mlax-batch %s | FileCheck %s
// RUN: %mlax-opt --mlax-batch %s | %mlax-run --entry test_psum --input '[[1, 2], [3, 4], [5, 6]]' | FileCheck %s --check-prefix=PSUM
// RUN: %mlax-opt --mlax-batch %s | %mlax-run --entry test_psum_unbatched --input '[1, 2]' | FileCheck %s --check-prefix=UNBATCHED
// RUN: %mlax-opt --mlax-batch %s | %mlax-run --entry test_axis_index | FileCheck %s --check-prefix=INDEX
// RUN: %mlax-opt --mlax-batch %s | %mlax-run --entry test_gather_scatter --input '[[1, 2, 3, 4], [5, 6, 7, 8]]' | FileCheck %s --check-prefix=GATHER
// RUN: %mlax-opt --mlax-batch %s | %mlax-run --entry test_permute --input '[[1, 2, 3, 4], [5, 6, 7, 8]]' | FileCheck %s --check-prefix=PERMUTE

// Collectives under a vmap declaration with axis_name: over that name the lanes are the
// instances, so the collective becomes ops over the batch dimension; over other names it
// stays a collective, batched lane by lane, for the vmap (or shard_map) that binds them.


// psum over the vmap's axis: a sum over the batch, the same on every lane.
// PSUM: result[0]: tensor<3x2xf32> = {{\[\[}}9.0, 12.0], [9.0, 12.0], [9.0, 12.0]]
// CHECK-LABEL: func.func private @sum_vmap(%arg0: tensor<3x2xf32>)
// CHECK-NEXT:    %[[S:.*]] = "mlax.reduce_sum"(%arg0) {dimensions = array<i64: 0>} : (tensor<3x2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[B:.*]] = "mlax.broadcast_in_dim"(%[[S]]) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 3, 2>}
// CHECK-NEXT:    return %[[B]]
func.func @test_psum(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0 = call @sum_vmap(%x) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
func.func private @sum(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mlax.psum"(%x) {axes = ["i"]} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @sum_vmap(tensor<3x2xf32>) -> tensor<3x2xf32> attributes {mlax.vmap = {callee = @sum, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 3 : i64, axis_name = "i"}}

// An operand that is the same on every lane sums to size * x (out_axes None: unbatched).
// UNBATCHED: result[0]: tensor<2xf32> = [3.0, 6.0]
// CHECK-LABEL: func.func private @sum2_vmap(%arg0: tensor<2xf32>)
// CHECK:         %[[C:.*]] = "mlax.constant"() {value = dense<3.000000e+00> : tensor<f32>}
// CHECK:         %[[M:.*]] = "mlax.mul"(%arg0, %{{.*}})
// CHECK-NEXT:    return %[[M]]
func.func @test_psum_unbatched(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = call @sum2_vmap(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @sum2(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mlax.psum"(%x) {axes = ["i"]} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @sum2_vmap(tensor<2xf32>) -> tensor<2xf32> attributes {mlax.vmap = {callee = @sum2, in_axes = array<i64: -1>, out_axes = array<i64: -1>, axis_size = 3 : i64, axis_name = "i"}}

// axis_index has no operand, yet depends on the axis: an iota over the lanes.
// INDEX: result[0]: tensor<4xi32> = [0, 1, 2, 3]
// CHECK-LABEL: func.func private @index_vmap()
// CHECK-NEXT:    %[[I:.*]] = "mlax.iota"() {dimension = 0 : i64, dtype = i32, shape = array<i64: 4>}
// CHECK-NEXT:    return %[[I]]
func.func @test_axis_index() -> tensor<4xi32> {
  %0 = call @index_vmap() : () -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
func.func private @index() -> tensor<i32> {
  %0 = "mlax.axis_index"() {axes = ["i"], axis_size = 4 : i64} : () -> tensor<i32>
  return %0 : tensor<i32>
}
func.func private @index_vmap() -> tensor<4xi32> attributes {mlax.vmap = {callee = @index, in_axes = array<i64>, out_axes = array<i64: 0>, axis_size = 4 : i64, axis_name = "i"}}

// Nothing to resolve: the gather is over "j", not the vmap's "i"; it shifts past the batch.
// CHECK-LABEL: func.func private @other_vmap(%arg0: tensor<3x2xf32>)
// CHECK-NEXT:    "mlax.all_gather"(%arg0) {axes = ["j"], axis_size = 4 : i64, dimension = 1 : i64} : (tensor<3x2xf32>) -> tensor<3x8xf32>
func.func @test_no_other_axis(%x: tensor<3x2xf32>) -> tensor<3x8xf32> {
  %0 = call @other_vmap(%x) : (tensor<3x2xf32>) -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}
func.func private @other(%x: tensor<2xf32>) -> tensor<8xf32> {
  %0 = "mlax.all_gather"(%x) {axes = ["j"], dimension = 0 : i64, axis_size = 4 : i64} : (tensor<2xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @other_vmap(tensor<3x2xf32>) -> tensor<3x8xf32> attributes {mlax.vmap = {callee = @other, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 3 : i64, axis_name = "i"}}

// Over ("i", "j") under the vmap of "i": reduce the batch, keep a pmax over "j".
// CHECK-LABEL: func.func private @both_vmap(%arg0: tensor<3x2xf32>)
// CHECK-NEXT:    %[[R:.*]] = "mlax.reduce_max"(%arg0) {dimensions = array<i64: 0>}
// CHECK-NEXT:    "mlax.pmax"(%[[R]]) {axes = ["j"]} : (tensor<2xf32>) -> tensor<2xf32>
func.func @test_leftover(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0 = call @both_vmap(%x) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
func.func private @both(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mlax.pmax"(%x) {axes = ["i", "j"]} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @both_vmap(tensor<3x2xf32>) -> tensor<3x2xf32> attributes {mlax.vmap = {callee = @both, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 3 : i64, axis_name = "i"}}

// all_gather folds the lanes into dimension 0; psum_scatter sums them and lane j keeps block j.
// GATHER: result[0]: tensor<2x8xf32> = {{\[\[}}1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]]
// GATHER: result[1]: tensor<2x2xf32> = {{\[\[}}6.0, 8.0], [10.0, 12.0]]
// CHECK-LABEL: func.func private @gs_vmap(%arg0: tensor<2x4xf32>)
// CHECK-NEXT:    %[[G:.*]] = "mlax.reshape"(%arg0) {shape = array<i64: 8>}
// CHECK-NEXT:    %[[S:.*]] = "mlax.reduce_sum"(%arg0) {dimensions = array<i64: 0>}
// CHECK-NEXT:    %[[P:.*]] = "mlax.reshape"(%[[S]]) {shape = array<i64: 2, 2>}
func.func @test_gather_scatter(%x: tensor<2x4xf32>) -> (tensor<2x8xf32>, tensor<2x2xf32>) {
  %0:2 = call @gs_vmap(%x) : (tensor<2x4xf32>) -> (tensor<2x8xf32>, tensor<2x2xf32>)
  return %0#0, %0#1 : tensor<2x8xf32>, tensor<2x2xf32>
}
func.func private @gs(%x: tensor<4xf32>) -> (tensor<8xf32>, tensor<2xf32>) {
  %0 = "mlax.all_gather"(%x) {axes = ["i"], dimension = 0 : i64, axis_size = 2 : i64} : (tensor<4xf32>) -> tensor<8xf32>
  %1 = "mlax.psum_scatter"(%x) {axes = ["i"], dimension = 0 : i64, axis_size = 2 : i64} : (tensor<4xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<8xf32>, tensor<2xf32>
}
func.func private @gs_vmap(tensor<2x4xf32>) -> (tensor<2x8xf32>, tensor<2x2xf32>) attributes {mlax.vmap = {callee = @gs, in_axes = array<i64: 0>, out_axes = array<i64: 0, 0>, axis_size = 2 : i64, axis_name = "i"}}

// Nothing to resolve: ppermute and all_to_all over "i" under the vmap of "j" stay collectives.
// CHECK-LABEL: func.func private @permj_vmap(%arg0: tensor<3x2xf32>)
// CHECK-NEXT:    "mlax.ppermute"(%arg0) {axes = ["i"], pairs = array<i64: 0, 1, 1, 2>} : (tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    "mlax.all_to_all"(%arg0) {axes = ["i"], axis_size = 1 : i64, concat_dimension = 1 : i64, split_dimension = 1 : i64}
func.func @test_no_permute_other_axis(%x: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %0:2 = call @permj_vmap(%x) : (tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>)
  return %0#0, %0#1 : tensor<3x2xf32>, tensor<3x2xf32>
}
func.func private @permj(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = "mlax.ppermute"(%x) {axes = ["i"], pairs = array<i64: 0, 1, 1, 2>} : (tensor<2xf32>) -> tensor<2xf32>
  %1 = "mlax.all_to_all"(%x) {axes = ["i"], split_dimension = 0 : i64, concat_dimension = 0 : i64, axis_size = 1 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}
func.func private @permj_vmap(tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) attributes {mlax.vmap = {callee = @permj, in_axes = array<i64: 0>, out_axes = array<i64: 0, 0>, axis_size = 3 : i64, axis_name = "j"}}

// ppermute 0 -> 1: lane 1 takes lane 0's row, lane 0 (no sender) gets zeros; all_to_all
// exchanges the halves of the rows.
// PERMUTE: result[0]: tensor<2x4xf32> = {{\[\[}}0.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0]]
// PERMUTE: result[1]: tensor<2x4xf32> = {{\[\[}}1.0, 2.0, 5.0, 6.0], [3.0, 4.0, 7.0, 8.0]]
// CHECK-LABEL: func.func private @perm_vmap(%arg0: tensor<2x4xf32>)
// CHECK:         "mlax.slice"(%arg0) {limit_indices = array<i64: 1, 4>, start_indices = array<i64: 0, 0>
// CHECK:         "mlax.concatenate"
// CHECK:         "mlax.reshape"(%arg0) {shape = array<i64: 2, 2, 2>}
// CHECK-NEXT:    "mlax.transpose"(%{{.*}}) {permutation = array<i64: 1, 0, 2>}
// CHECK-NEXT:    "mlax.reshape"(%{{.*}}) {shape = array<i64: 2, 4>}
func.func @test_permute(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0:2 = call @perm_vmap(%x) : (tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  return %0#0, %0#1 : tensor<2x4xf32>, tensor<2x4xf32>
}
func.func private @perm(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "mlax.ppermute"(%x) {axes = ["i"], pairs = array<i64: 0, 1>} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "mlax.all_to_all"(%x) {axes = ["i"], split_dimension = 0 : i64, concat_dimension = 0 : i64, axis_size = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
func.func private @perm_vmap(tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) attributes {mlax.vmap = {callee = @perm, in_axes = array<i64: 0>, out_axes = array<i64: 0, 0>, axis_size = 2 : i64, axis_name = "i"}}
