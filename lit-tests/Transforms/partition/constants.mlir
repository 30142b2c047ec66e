// RUN: %mlax-opt --mlax-partition --split-input-file %s | FileCheck %s

// A splat constant is made at its local shape; iota is made locally along the dimensions it
// does not count, and sliced along the one it counts.
// CHECK-LABEL: func.func @test_iota_and_splat_made_locally
// CHECK-NEXT:    %[[C:.*]] = "mlax.constant"() {value = dense<2.000000e+00> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
// CHECK-NEXT:    %[[I:.*]] = "mlax.iota"() {dimension = 1 : i64, dtype = f32, shape = array<i64: 4, 4>} : () -> tensor<4x4xf32>
// CHECK:         %[[S:.*]] = "mlax.dynamic_slice"(%[[I]], {{.*}}) {slice_sizes = array<i64: 4, 2>}
// CHECK:         "mlax.mul"(%arg0, %[[C]]) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK:         "mlax.add"(%arg0, %[[S]]) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_iota_and_splat_made_locally(%a: tensor<8x4xf32> {mlax.sharding = [["x"], ["y"]]}) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
    %c = "mlax.constant"() {value = dense<2.0> : tensor<8x4xf32>} : () -> tensor<8x4xf32>
    %i = "mlax.iota"() {shape = array<i64: 8, 4>, dtype = f32, dimension = 1 : i64} : () -> tensor<8x4xf32>
    %0 = "mlax.mul"(%a, %c) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    %1 = "mlax.add"(%a, %i) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    return %0, %1 : tensor<8x4xf32>, tensor<8x4xf32>
  }
}

// -----

// Another constant is made whole on every device and sliced to its block.
// CHECK-LABEL: func.func @test_constant_sliced
// CHECK-NEXT:    %[[C:.*]] = "mlax.constant"() {value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>}
// CHECK:         %[[S:.*]] = "mlax.dynamic_slice"(%[[C]], %{{.*}}) {slice_sizes = array<i64: 2>} : (tensor<4xf32>, tensor<i32>) -> tensor<2xf32>
// CHECK-NEXT:    "mlax.add"(%arg0, %[[S]])
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_constant_sliced(%a: tensor<4xf32> {mlax.sharding = [["x"]]}) -> tensor<4xf32> {
    %c = "mlax.constant"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
    %0 = "mlax.add"(%a, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
