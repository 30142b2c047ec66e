// RUN: %mlax-opt --mlax-partition --split-input-file %s | FileCheck %s

// Rows of the lhs sharded over x, columns of the rhs over y: each device computes its
// block of the product, no communication.
// CHECK-LABEL: func.func @test_dot_free_dims_sharded
// CHECK-SAME:    -> (tensor<4x3xf32> {mlax.sharding = {{\[\[}}"x"], ["y"]]})
// CHECK-NEXT:    %[[D:.*]] = "mlax.dot_general"(%arg0, %arg1) {{.*}} : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    return %[[D]]
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_dot_free_dims_sharded(%a: tensor<8x4xf32> {mlax.sharding = [["x"], []]}, %b: tensor<4x6xf32> {mlax.sharding = [[], ["y"]]}) -> tensor<8x6xf32> {
    %0 = "mlax.dot_general"(%a, %b) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    return %0 : tensor<8x6xf32>
  }
}

// -----

// The contracting dimension sharded: partial products, completed by a psum.
// CHECK-LABEL: func.func @test_dot_contracting_sharded
// CHECK-SAME:    -> (tensor<8x6xf32> {mlax.sharding = {{\[\[}}], []]})
// CHECK-NEXT:    %[[D:.*]] = "mlax.dot_general"(%arg0, %arg1) {{.*}} : (tensor<8x2xf32>, tensor<2x6xf32>) -> tensor<8x6xf32>
// CHECK-NEXT:    %[[P:.*]] = "mlax.psum"(%[[D]]) {axes = ["y"]} : (tensor<8x6xf32>) -> tensor<8x6xf32>
// CHECK-NEXT:    return %[[P]]
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_dot_contracting_sharded(%a: tensor<8x4xf32> {mlax.sharding = [[], ["y"]]}, %b: tensor<4x6xf32> {mlax.sharding = [["y"], []]}) -> tensor<8x6xf32> {
    %0 = "mlax.dot_general"(%a, %b) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    return %0 : tensor<8x6xf32>
  }
}

// -----

// Batch dimensions shared by both operands: the rhs follows the lhs's batch sharding by a
// local slice.
// CHECK-LABEL: func.func @test_dot_batch_sharded
// CHECK:         %[[B:.*]] = "mlax.dynamic_slice"(%arg1, {{.*}}) {slice_sizes = array<i64: 2, 4, 5>} : (tensor<4x4x5xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x4x5xf32>
// CHECK-NEXT:    "mlax.dot_general"(%arg0, %[[B]]) {{.*}} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_dot_batch_sharded(%a: tensor<4x3x4xf32> {mlax.sharding = [["x"], [], []]}, %b: tensor<4x4x5xf32>) -> tensor<4x3x5xf32> {
    %0 = "mlax.dot_general"(%a, %b) {lhs_batch_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, result_dtype = f32, rhs_batch_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<4x3x4xf32>, tensor<4x4x5xf32>) -> tensor<4x3x5xf32>
    return %0 : tensor<4x3x5xf32>
  }
}
