// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s

// f(x) = sin(x) * x. Forward mode: each primal op, then its tangent.
// CHECK-LABEL: func.func private @f_jvp(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK-NOT:     mlax.jvp
// CHECK:         %[[S:.*]] = "mlax.sin"(%arg0)
// CHECK:         %[[C:.*]] = "mlax.cos"(%arg0)
// CHECK:         %[[TS:.*]] = "mlax.mul"(%arg1, %[[C]])
// CHECK:         %[[Y:.*]] = "mlax.mul"(%[[S]], %arg0)
// CHECK-DAG:     "mlax.mul"(%[[TS]], %arg0)
// CHECK-DAG:     "mlax.mul"(%[[S]], %arg1)
// CHECK:         %[[TY:.*]] = "mlax.add"
// CHECK:         return %[[Y]], %[[TY]]

// Reverse mode: the primal ops, then the transposed tangent ops in reverse order.
// CHECK-LABEL: func.func private @f_vjp(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK-NOT:     mlax.vjp
// CHECK:         %[[S:.*]] = "mlax.sin"(%arg0)
// CHECK:         %[[C:.*]] = "mlax.cos"(%arg0)
// CHECK:         %[[Y:.*]] = "mlax.mul"(%[[S]], %arg0)
// CHECK:         "mlax.mul"(%[[S]], %arg1)
// CHECK:         "mlax.mul"(%arg1, %arg0)
// CHECK:         %[[G:.*]] = "mlax.add"
// CHECK:         return %[[Y]], %[[G]]
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %s = "mlax.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %y = "mlax.mul"(%s, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}
func.func private @f_jvp(tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.jvp = {callee = @f}}
func.func private @f_vjp(tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.vjp = {callee = @f, argnums = array<i64: 0>}}

// Non-differentiable paths emit nothing: the comparison and the integer input have zero
// tangents, so the only tangent code is for the float branch of the select.
// CHECK-LABEL: func.func private @g_jvp
// CHECK:         "mlax.compare"
// CHECK-NOT:     "mlax.compare"
// CHECK:         "mlax.select"(%{{.*}}, %arg2, %{{.*}})
// CHECK:         return
func.func @g(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %zero = "mlax.constant"() {value = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %p = "mlax.compare"(%x, %zero) {comparison_direction = "GT"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %r = "mlax.select"(%p, %x, %zero) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %j = "mlax.add"(%i, %i) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %r, %j : tensor<4xf32>, tensor<4xi32>
}
func.func private @g_jvp(tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>) attributes {mlax.jvp = {callee = @g}}
