// RUN: %mlax-opt --mlax-expand-transforms %s | FileCheck %s
// RUN: %mlax-opt --mlax-expand-transforms --mlax-simulate-devices %s | %mlax-run --entry main --input '[0.5, -1.0]' --input '[[1, 2], [3, 4]]' | FileCheck %s --check-prefix=NUM

// Reverse mode through a shard_map: linearization gives the primal shard_map and a tangent
// one (its callee keeps the jvp's tangent outputs); the transpose is a shard_map of the
// tangent body's vjp taking the known operands and the result cotangent. Its callee divides
// the cotangent of the replicated result by the size of the axis its out spec does not name
// and sums the cotangent of the replicated w over it (psum): jax's untyped transpose.
// loss(w, x) = sum_ij sin(x_ij w_j); d/dw_j = sum_i x_ij cos(x_ij w_j).

// CHECK-LABEL: func.func private @loss_vjp(%arg0: tensor<2xf32>, %arg1: tensor<2x2xf32>, %arg2: tensor<f32>)
// CHECK:         %[[OUT:.*]] = call @body_shard_map(%arg0, %arg1)
// CHECK:         %[[CT:.*]] = call @body_tangent_transpose_shard_map(%arg0, %arg1, %{{.*}}, %arg2) : (tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK:         return %[[OUT]], %[[CT]]
// The tangent shard_map: (w, x, dw, dx), each tangent with its primal's spec.
// CHECK:       func.func private @body_tangent_shard_map({{.*}}) -> tensor<f32> attributes {mlax.shard_map = {axis_names = ["i"], axis_sizes = array<i64: 2>, callee = @body_tangent, in_specs = {{.*}}"i"{{.*}}"i"{{.*}}}}
// CHECK-LABEL: func.func private @body_tangent_transpose(%arg0: tensor<2xf32>, %arg1: tensor<1x2xf32>, %arg2: tensor<1x2xf32>, %arg3: tensor<f32>) -> tensor<2xf32>
// CHECK:         %[[HALF:.*]] = "mlax.constant"() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK:         %[[SCALED:.*]] = "mlax.mul"(%arg3, %{{.*}})
// CHECK:         %[[V:.*]]:2 = call @body_tangent_vjp(%arg0, %arg1, %{{.*}}, %arg2, %[[SCALED]])
// CHECK:         %[[SUM:.*]] = "mlax.psum"(%[[V]]#1) {axes = ["i"]} : (tensor<2xf32>) -> tensor<2xf32>
// CHECK:         return %[[SUM]]
// The transpose's shard_map gives w's cotangent replicated, as w is.
// CHECK:       func.func private @body_tangent_transpose_shard_map({{.*}}) -> tensor<2xf32> attributes {mlax.shard_map = {axis_names = ["i"], axis_sizes = array<i64: 2>, callee = @body_tangent_transpose, in_specs = {{.*}}, out_specs = {{\[\[\[}}]]]}}

// NUM: result[0]: tensor<2xf32> = [1.0897942, -3.446868]
module attributes {mlax.mesh = {axis_names = ["i"], axis_sizes = array<i64: 2>, device_ids = array<i64: 0, 1>}} {
  func.func private @body(%w: tensor<2xf32>, %x: tensor<1x2xf32>) -> tensor<f32> {
    %0 = "mlax.broadcast_in_dim"(%w) {shape = array<i64: 1, 2>, broadcast_dimensions = array<i64: 1>} : (tensor<2xf32>) -> tensor<1x2xf32>
    %1 = "mlax.mul"(%x, %0) : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
    %2 = "mlax.sin"(%1) : (tensor<1x2xf32>) -> tensor<1x2xf32>
    %3 = "mlax.reduce_sum"(%2) {dimensions = array<i64: 0, 1>} : (tensor<1x2xf32>) -> tensor<f32>
    %4 = "mlax.psum"(%3) {axes = ["i"]} : (tensor<f32>) -> tensor<f32>
    return %4 : tensor<f32>
  }
  func.func private @body_shard_map(tensor<2xf32>, tensor<2x2xf32>) -> tensor<f32> attributes {mlax.shard_map = {callee = @body, axis_names = ["i"], axis_sizes = array<i64: 2>, in_specs = [[[]], [["i"], []]], out_specs = [[]]}}
  func.func @loss(%w: tensor<2xf32>, %x: tensor<2x2xf32>) -> tensor<f32> {
    %0 = func.call @body_shard_map(%w, %x) : (tensor<2xf32>, tensor<2x2xf32>) -> tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @loss_vjp(tensor<2xf32>, tensor<2x2xf32>, tensor<f32>) -> (tensor<f32>, tensor<2xf32>) attributes {mlax.vjp = {callee = @loss, argnums = array<i64: 0>}}
  func.func @main(%w: tensor<2xf32>, %x: tensor<2x2xf32>) -> tensor<2xf32> {
    %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %0:2 = func.call @loss_vjp(%w, %x, %one) : (tensor<2xf32>, tensor<2x2xf32>, tensor<f32>) -> (tensor<f32>, tensor<2xf32>)
    return %0#1 : tensor<2xf32>
  }
}
