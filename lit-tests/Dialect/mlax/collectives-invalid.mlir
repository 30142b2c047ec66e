// RUN: %mlax-opt %s --split-input-file --verify-diagnostics

// A collective names at least one axis.
func.func @no_axes(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mlax.psum' op axes must name at least one axis}}
  %0 = "mlax.psum"(%x) {axes = []} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @repeated_axis(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mlax.pmax' op axes ['x', 'x'] name axis 'x' more than once}}
  %0 = "mlax.pmax"(%x) {axes = ["x", "x"]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @psum_of_booleans(%x: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error@+1 {{'mlax.psum' op operand must have numeric element type, got bool}}
  %0 = "mlax.psum"(%x) {axes = ["x"]} : (tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @gather_dimension_out_of_range(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'mlax.all_gather' op dimension 1 out of range for operand rank 1}}
  %0 = "mlax.all_gather"(%x) {axes = ["x"], dimension = 1 : i64, axis_size = 2 : i64} : (tensor<4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @gather_wrong_result(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{result type(s) tensor<4xf32> differ from the inferred tensor<8xf32>}}
  %0 = "mlax.all_gather"(%x) {axes = ["x"], dimension = 0 : i64, axis_size = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @scatter_size_does_not_divide(%x: tensor<5xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'mlax.psum_scatter' op dimension 0 of operand shape (5,) has size 5, which axis_size 2 does not divide}}
  %0 = "mlax.psum_scatter"(%x) {axes = ["x"], dimension = 0 : i64, axis_size = 2 : i64} : (tensor<5xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @all_to_all_split_does_not_divide(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'mlax.all_to_all' op split_dimension 0 of operand shape (3, 4) has size 3, which axis_size 2 does not divide}}
  %0 = "mlax.all_to_all"(%x) {axes = ["x"], split_dimension = 0 : i64, concat_dimension = 1 : i64, axis_size = 2 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @ppermute_odd_pairs(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mlax.ppermute' op pairs must be flattened (source, destination) pairs, got 3 values}}
  %0 = "mlax.ppermute"(%x) {axes = ["x"], pairs = array<i64: 0, 1, 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @ppermute_repeated_destination(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mlax.ppermute' op ppermute destinations must be unique, got pairs [(0, 1), (2, 1)]}}
  %0 = "mlax.ppermute"(%x) {axes = ["x"], pairs = array<i64: 0, 1, 2, 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @axis_index_bad_size() -> tensor<i32> {
  // expected-error@+1 {{'mlax.axis_index' op axis_size must be at least 1, got 0}}
  %0 = "mlax.axis_index"() {axes = ["x"], axis_size = 0 : i64} : () -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

func.func @axis_index_is_i32() -> tensor<i64> {
  // expected-error@+1 {{result type(s) tensor<i64> differ from the inferred tensor<i32>}}
  %0 = "mlax.axis_index"() {axes = ["x"], axis_size = 2 : i64} : () -> tensor<i64>
  return %0 : tensor<i64>
}
