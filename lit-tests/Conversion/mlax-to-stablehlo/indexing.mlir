// RUN: %mlax-opt %s --allow-unregistered-dialect --mlax-lower-to-stablehlo | FileCheck %s

// gather ("clip"): one stablehlo.gather with mlax's dimension numbers; StableHLO clamps every
// start into [0, dim - slice_size] itself.
// CHECK-LABEL: func.func @test_gather
// CHECK-NEXT:    %[[G:.*]] = "stablehlo.gather"(%arg0, %arg1) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], operand_batching_dims = [], start_indices_batching_dims = [], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>} : (tensor<5x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>
// CHECK-NEXT:    return %[[G]]
func.func @test_gather(%x: tensor<5x4xf32>, %i: tensor<3x1xi32>) -> tensor<3x4xf32> {
  %0 = "mlax.gather"(%x, %i) {offset_dims = array<i64: 1>, collapsed_slice_dims = array<i64: 0>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1, 4>, mode = "clip"} : (tensor<5x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// mode "fill": the clamped gather, then the fill value (NaN) wherever a window's start is
// not in [0, dim - slice_size]: a mask over the index vectors, reduced with `and` along
// index_vector_dim and broadcast over the window dimensions.
// CHECK-LABEL: func.func @test_gather_fill
// CHECK:         %[[G:.*]] = "stablehlo.gather"(%arg0, %arg1)
// CHECK:         %[[HI_SCALAR:.*]] = "stablehlo.constant"() {value = dense<3> : tensor<i32>}
// CHECK-NEXT:    %[[HI:.*]] = "stablehlo.broadcast_in_dim"(%[[HI_SCALAR]]) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<2x1xi32>
// CHECK:         %[[LO_SCALAR:.*]] = "stablehlo.constant"() {value = dense<0> : tensor<i32>}
// CHECK-NEXT:    %[[LO:.*]] = "stablehlo.broadcast_in_dim"(%[[LO_SCALAR]]) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<2x1xi32>
// CHECK:         %[[GE:.*]] = "stablehlo.compare"(%arg1, %[[LO]]) {compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}
// CHECK:         %[[LE:.*]] = "stablehlo.compare"(%arg1, %[[HI]]) {{.*}}comparison_direction LE
// CHECK:         %[[IN:.*]] = "stablehlo.and"(%[[GE]], %[[LE]])
// CHECK:         %[[FITS:.*]] = "stablehlo.reduce"(%[[IN]], %{{.*}})
// CHECK:           "stablehlo.and"
// CHECK:         }) {dimensions = array<i64: 1>} : (tensor<2x1xi1>, tensor<i1>) -> tensor<2xi1>
// CHECK:         %[[MASK:.*]] = "stablehlo.broadcast_in_dim"(%[[FITS]]) {broadcast_dimensions = array<i64: 0>} : (tensor<2xi1>) -> tensor<2x2xi1>
// CHECK:         %[[NAN_SCALAR:.*]] = "stablehlo.constant"() {value = dense<0x7FC00000> : tensor<f32>}
// CHECK-NEXT:    %[[NAN:.*]] = "stablehlo.broadcast_in_dim"(%[[NAN_SCALAR]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x2xf32>
// CHECK:         "stablehlo.select"(%[[MASK]], %[[G]], %[[NAN]])
func.func @test_gather_fill(%x: tensor<5xf32>, %i: tensor<2x1xi32>) -> tensor<2x2xf32> {
  %0 = "mlax.gather"(%x, %i) {offset_dims = array<i64: 1>, collapsed_slice_dims = array<i64>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 2>, mode = "fill"} : (tensor<5xf32>, tensor<2x1xi32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// Batching dimensions are StableHLO's own; unsigned narrow indices widen to i32 first.
// CHECK-LABEL: func.func @test_gather_batching
// CHECK-NEXT:    %[[I:.*]] = "stablehlo.convert"(%arg1) : (tensor<3xui8>) -> tensor<3xi32>
// CHECK-NEXT:    "stablehlo.gather"(%arg0, %[[I]]) {dimension_numbers = #stablehlo.gather<offset_dims = [], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1>}
func.func @test_gather_batching(%x: tensor<3x4xi16>, %i: tensor<3xui8>) -> tensor<3xi16> {
  %0 = "mlax.gather"(%x, %i) {offset_dims = array<i64>, collapsed_slice_dims = array<i64: 1>, operand_batching_dims = array<i64: 0>, start_indices_batching_dims = array<i64: 0>, start_index_map = array<i64: 1>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1, 1>, mode = "promise_in_bounds"} : (tensor<3x4xi16>, tensor<3xui8>) -> tensor<3xi16>
  return %0 : tensor<3xi16>
}

// ui64 indices saturate at the i64 maximum before turning signed (they clamp high, never
// become negative).
// CHECK-LABEL: func.func @test_gather_ui64
// CHECK-NEXT:    %[[MAX_SCALAR:.*]] = "stablehlo.constant"() {value = dense<9223372036854775807> : tensor<ui64>}
// CHECK-NEXT:    %[[MAX:.*]] = "stablehlo.broadcast_in_dim"(%[[MAX_SCALAR]]) {broadcast_dimensions = array<i64>} : (tensor<ui64>) -> tensor<2x1xui64>
// CHECK-NEXT:    %[[SAT:.*]] = "stablehlo.minimum"(%arg1, %[[MAX]])
// CHECK-NEXT:    %[[I:.*]] = "stablehlo.convert"(%[[SAT]]) : (tensor<2x1xui64>) -> tensor<2x1xi64>
// CHECK-NEXT:    "stablehlo.gather"(%arg0, %[[I]])
func.func @test_gather_ui64(%x: tensor<5xf32>, %i: tensor<2x1xui64>) -> tensor<2xf32> {
  %0 = "mlax.gather"(%x, %i) {offset_dims = array<i64>, collapsed_slice_dims = array<i64: 0>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1>, mode = "clip"} : (tensor<5xf32>, tensor<2x1xui64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// scatter_add ("fill": XLA drops a window whose start does not fit): the update region adds.
// CHECK-LABEL: func.func @test_scatter_add
// CHECK-NEXT:    %[[S:.*]] = "stablehlo.scatter"(%arg0, %arg1, %arg2) ({
// CHECK-NEXT:    ^bb0(%[[OLD:.*]]: tensor<f32>, %[[NEW:.*]]: tensor<f32>):
// CHECK-NEXT:      %[[SUM:.*]] = "stablehlo.add"(%[[OLD]], %[[NEW]])
// CHECK-NEXT:      "stablehlo.return"(%[[SUM]])
// CHECK-NEXT:    }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], input_batching_dims = [], scatter_indices_batching_dims = [], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}
// CHECK-NEXT:    return %[[S]]
func.func @test_scatter_add(%x: tensor<5x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x4xf32>) -> tensor<5x4xf32> {
  %0 = "mlax.scatter_add"(%x, %i, %u) {update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "fill"} : (tensor<5x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// mode "clip": starts clamped into [0, dim - window] per index vector element (here rows
// [0, 4] and columns [0, 2] for a 1x2 window); a plain scatter's region returns the update.
// The limits are one vector broadcast over the index vectors, not a constant of their size.
// CHECK-LABEL: func.func @test_scatter_clip
// CHECK-NEXT:    %[[LIMITS:.*]] = "stablehlo.constant"() {value = dense<[4, 2]> : tensor<2xi64>}
// CHECK-NEXT:    %[[HI:.*]] = "stablehlo.broadcast_in_dim"(%[[LIMITS]]) {broadcast_dimensions = array<i64: 1>} : (tensor<2xi64>) -> tensor<2x2xi64>
// CHECK-NEXT:    %[[LO_SCALAR:.*]] = "stablehlo.constant"() {value = dense<0> : tensor<i64>}
// CHECK-NEXT:    %[[LO:.*]] = "stablehlo.broadcast_in_dim"(%[[LO_SCALAR]]) {broadcast_dimensions = array<i64>} : (tensor<i64>) -> tensor<2x2xi64>
// CHECK-NEXT:    %[[I:.*]] = "stablehlo.clamp"(%[[LO]], %arg1, %[[HI]])
// CHECK-NEXT:    "stablehlo.scatter"(%arg0, %[[I]], %arg2) ({
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<f32>, %[[NEW:.*]]: tensor<f32>):
// CHECK-NEXT:      "stablehlo.return"(%[[NEW]])
func.func @test_scatter_clip(%x: tensor<5x4xf32>, %i: tensor<2x2xi64>, %u: tensor<2x2xf32>) -> tensor<5x4xf32> {
  %0 = "mlax.scatter"(%x, %i, %u) {update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0, 1>, index_vector_dim = 1 : i64, mode = "clip"} : (tensor<5x4xf32>, tensor<2x2xi64>, tensor<2x2xf32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// On booleans max is or (and min, mul are and; add is or).
// CHECK-LABEL: func.func @test_scatter_max_bool
// CHECK:         "stablehlo.scatter"
// CHECK:           "stablehlo.or"(%{{.*}}, %{{.*}}) : (tensor<i1>, tensor<i1>) -> tensor<i1>
func.func @test_scatter_max_bool(%x: tensor<4xi1>, %i: tensor<3x1xi8>, %u: tensor<3xi1>) -> tensor<4xi1> {
  %0 = "mlax.scatter_max"(%x, %i, %u) {update_window_dims = array<i64>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "promise_in_bounds"} : (tensor<4xi1>, tensor<3x1xi8>, tensor<3xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// A rank-0 operand (XLA's scatter simplifier rejects it) scatters into a one-element vector
// at start 0 for every update.
// CHECK-LABEL: func.func @test_scatter_rank0
// CHECK-NEXT:    %[[ZEROS_SCALAR:.*]] = "stablehlo.constant"() {value = dense<0> : tensor<i32>}
// CHECK-NEXT:    %[[ZEROS:.*]] = "stablehlo.broadcast_in_dim"(%[[ZEROS_SCALAR]]) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<3x1xi32>
// CHECK-NEXT:    %[[V:.*]] = "stablehlo.reshape"(%arg0) : (tensor<f16>) -> tensor<1xf16>
// CHECK-NEXT:    %[[S:.*]] = "stablehlo.scatter"(%[[V]], %[[ZEROS]], %arg2)
// CHECK:           "stablehlo.multiply"
// CHECK:         }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}
// CHECK-NEXT:    "stablehlo.reshape"(%[[S]]) : (tensor<1xf16>) -> tensor<f16>
func.func @test_scatter_rank0(%x: tensor<f16>, %i: tensor<3x0xi32>, %u: tensor<3xf16>) -> tensor<f16> {
  %0 = "mlax.scatter_mul"(%x, %i, %u) {update_window_dims = array<i64>, inserted_window_dims = array<i64>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64>, index_vector_dim = 1 : i64, mode = "clip"} : (tensor<f16>, tensor<3x0xi32>, tensor<3xf16>) -> tensor<f16>
  return %0 : tensor<f16>
}
