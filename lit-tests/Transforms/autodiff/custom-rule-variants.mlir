// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s

// A custom_jvp rule traced with symbolic_zeros carries `mlax.rule_variants`: the token of a
// front-end maker that traces it again for the zero pattern the pass meets. Read from text
// there is no maker, so the rule is used as it is (its all-perturbed case, same numbers):
// @h differentiates only %x, the tangent of %y is a materialized zero passed to @p_rule.
// CHECK-LABEL: func.func private @h_vjp(%arg0: tensor<f32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> (tensor<f32>, tensor<f32>)
// CHECK:         %[[ZERO:.*]] = "mlax.constant"() {value = dense<0.000000e+00>
// CHECK:         %[[R:.*]] = "mlax.mul"(%arg0, %arg1)
// CHECK:         "mlax.mul"(%arg0, %[[ZERO]])
// CHECK:         %[[CT:.*]] = "mlax.mul"(%arg2, %arg1)
// CHECK:         return %[[R]], %[[CT]]
func.func private @p(%x: tensor<f32>, %y: tensor<f32>) -> tensor<f32> {
  %0 = "mlax.mul"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @p_rule(%x: tensor<f32>, %y: tensor<f32>, %tx: tensor<f32>, %ty: tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.rule_variants = "rule-without-maker"} {
  %0 = "mlax.mul"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %1 = "mlax.mul"(%tx, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %2 = "mlax.mul"(%x, %ty) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %3 = "mlax.add"(%1, %2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0, %3 : tensor<f32>, tensor<f32>
}
func.func private @p_custom(tensor<f32>, tensor<f32>) -> tensor<f32> attributes {mlax.custom_jvp_call = {callee = @p, jvp = @p_rule}}
func.func @h(%x: tensor<f32>, %y: tensor<f32>) -> tensor<f32> {
  %0 = func.call @p_custom(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @h_vjp(tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.vjp = {callee = @h, argnums = array<i64: 0>}}
