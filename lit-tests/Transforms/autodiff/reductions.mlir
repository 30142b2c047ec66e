// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s

// Reductions and scans: reduce_max's cotangent goes to the maxima of each row, shared
// equally among ties (JAX's rule: x == max, divided by its count), selected where x == max
// (so a row whose max is NaN gets 0, not inf * 0); cumsum's transpose is the reversed cumsum.
// Both contributions to x are summed.
// CHECK-LABEL: func.func private @f_vjp(%arg0: tensor<2x3xf32>, %arg1: tensor<2xf32>, %arg2: tensor<2x3xf32>)
// CHECK:         %[[M:.*]] = "mlax.reduce_max"(%arg0) {dimensions = array<i64: 1>}
// CHECK:         %[[B:.*]] = "mlax.broadcast_in_dim"(%[[M]])
// CHECK:         %[[EQ:.*]] = "mlax.compare"(%arg0, %[[B]]) {comparison_direction = "EQ"}
// CHECK:         %[[MASK:.*]] = "mlax.convert"(%[[EQ]]) {new_dtype = f32}
// CHECK:         %[[COUNT:.*]] = "mlax.reduce_sum"(%[[MASK]]) {dimensions = array<i64: 1>}
// CHECK:         %[[S:.*]] = "mlax.cumsum"(%arg0) {axis = 1 : i64, reverse = 0 : i64}
// CHECK:         %[[RS:.*]] = "mlax.cumsum"(%arg2) {axis = 1 : i64, reverse = 1 : i64}
// CHECK:         %[[SHARE:.*]] = "mlax.div"(%arg1, %[[COUNT]])
// CHECK:         %[[SB:.*]] = "mlax.broadcast_in_dim"(%[[SHARE]])
// CHECK:         %[[ZERO:.*]] = "mlax.broadcast_in_dim"
// CHECK:         %[[GM:.*]] = "mlax.select"(%[[EQ]], %[[SB]], %[[ZERO]])
// CHECK:         %[[G:.*]] = "mlax.add"(%[[RS]], %[[GM]])
// CHECK:         return %[[M]], %[[S]], %[[G]]
func.func @f(%x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>) {
  %0 = "mlax.reduce_max"(%x) {dimensions = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  %1 = "mlax.cumsum"(%x) {axis = 1 : i64, reverse = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2xf32>, tensor<2x3xf32>
}
func.func private @f_vjp(tensor<2x3xf32>, tensor<2xf32>, tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>, tensor<2x3xf32>) attributes {mlax.vjp = {callee = @f, argnums = array<i64: 0>}}
