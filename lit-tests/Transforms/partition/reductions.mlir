// RUN: %mlax-opt --mlax-partition --split-input-file %s | FileCheck %s

// A reduction over a sharded dimension: local reduce, then the collective that completes it.
// CHECK-LABEL: func.func @test_reduce_sum_sharded_dim
// CHECK-SAME:    -> (tensor<2xf32> {mlax.sharding = {{\[\[}}"y"]]})
// CHECK-NEXT:    %[[R:.*]] = "mlax.reduce_sum"(%arg0) {dimensions = array<i64: 0>} : (tensor<4x2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[P:.*]] = "mlax.psum"(%[[R]]) {axes = ["x"]} : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    return %[[P]]
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_reduce_sum_sharded_dim(%a: tensor<8x4xf32> {mlax.sharding = [["x"], ["y"]]}) -> tensor<4xf32> {
    %0 = "mlax.reduce_sum"(%a) {dimensions = array<i64: 0>} : (tensor<8x4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// max, min and the boolean or/and complete with pmax/pmin.
// CHECK-LABEL: func.func @test_reduce_max_min_or
// CHECK:         "mlax.reduce_max"
// CHECK-NEXT:    "mlax.pmax"(%{{.*}}) {axes = ["x", "y"]}
// CHECK:         "mlax.reduce_min"
// CHECK-NEXT:    "mlax.pmin"(%{{.*}}) {axes = ["x"]}
// CHECK:         "mlax.reduce_or"
// CHECK-NEXT:    "mlax.pmax"(%{{.*}}) {axes = ["x"]}
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_reduce_max_min_or(%a: tensor<8x4xf32> {mlax.sharding = [["x"], ["y"]]}, %b: tensor<8xi1> {mlax.sharding = [["x"]]}) -> (tensor<f32>, tensor<4xf32>, tensor<i1>) {
    %0 = "mlax.reduce_max"(%a) {dimensions = array<i64: 0, 1>} : (tensor<8x4xf32>) -> tensor<f32>
    %1 = "mlax.reduce_min"(%a) {dimensions = array<i64: 0>} : (tensor<8x4xf32>) -> tensor<4xf32>
    %2 = "mlax.reduce_or"(%b) {dimensions = array<i64: 0>} : (tensor<8xi1>) -> tensor<i1>
    return %0, %1, %2 : tensor<f32>, tensor<4xf32>, tensor<i1>
  }
}

// -----

// No collective multiplies, and argmax needs the whole axis: the operand is gathered.
// CHECK-LABEL: func.func @test_no_partial_prod_or_argmax
// CHECK:         %[[G:.*]] = "mlax.all_gather"(%arg0) {axes = ["x"], axis_size = 2 : i64, dimension = 0 : i64} : (tensor<4x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:    "mlax.reduce_prod"(%[[G]]) {dimensions = array<i64: 0>} : (tensor<8x4xf32>) -> tensor<4xf32>
// CHECK-NOT:     "mlax.p
// CHECK:         "mlax.argmax"(%{{.*}}) {axis = 0 : i64, index_dtype = i32} : (tensor<8x4xf32>) -> tensor<4xi32>
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_no_partial_prod_or_argmax(%a: tensor<8x4xf32> {mlax.sharding = [["x"], []]}) -> (tensor<4xf32>, tensor<4xi32>) {
    %0 = "mlax.reduce_prod"(%a) {dimensions = array<i64: 0>} : (tensor<8x4xf32>) -> tensor<4xf32>
    %1 = "mlax.argmax"(%a) {axis = 0 : i64, index_dtype = i32} : (tensor<8x4xf32>) -> tensor<4xi32>
    return %0, %1 : tensor<4xf32>, tensor<4xi32>
  }
}
