// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s

// Outside differentiation the declaration becomes a call of its function.
// CHECK-LABEL: func.func private @f_custom(%arg0: tensor<f32>) -> tensor<f32> {
// CHECK-NEXT:    %[[R:.*]] = call @f(%arg0)
// CHECK-NEXT:    return %[[R]]
// @g calls @f through an mlax.custom_jvp_call declaration: differentiating @g uses the rule
// @f_rule (its tangent is 3 * t), not @f's own derivative (min would give a select).
// CHECK-LABEL: func.func private @g_jvp(%arg0: tensor<f32>, %arg1: tensor<f32>) -> (tensor<f32>, tensor<f32>)
// CHECK:         %[[Y:.*]] = "mlax.min"(%arg0
// CHECK:         %[[T:.*]] = "mlax.mul"(%arg1, %{{.*}})
// CHECK-NOT:     "mlax.select"
// CHECK:         return %[[Y]], %[[T]]
// CHECK-NOT:   mlax.custom_jvp_call =
func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %0 = "mlax.min"(%x, %one) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @f_rule(%x: tensor<f32>, %t: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %three = "mlax.constant"() {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
  %0 = "mlax.min"(%x, %one) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %1 = "mlax.mul"(%t, %three) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}
func.func private @f_custom(tensor<f32>) -> tensor<f32> attributes {mlax.custom_jvp_call = {callee = @f, jvp = @f_rule}}
func.func @g(%x: tensor<f32>) -> tensor<f32> {
  %0 = func.call @f_custom(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @g_jvp(tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.jvp = {callee = @g}}
