// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s

// grad of grad: @dfdx calls the (unresolved) derivative of @f; differentiating @dfdx resolves
// that one first, then walks its body. No transformation attribute is left.
// CHECK-NOT:   mlax.vjp =
// CHECK-LABEL: func.func private @f_vjp(%arg0: tensor<f32>, %arg1: tensor<f32>) -> (tensor<f32>, tensor<f32>)
// CHECK:         "mlax.cos"
// CHECK:         return
// CHECK-LABEL: func.func private @dfdx_vjp(%arg0: tensor<f32>, %arg1: tensor<f32>) -> (tensor<f32>, tensor<f32>)
// CHECK-NOT:     call
// CHECK:         "mlax.sin"
// CHECK:         "mlax.cos"
// CHECK:         return
// CHECK-NOT:   mlax.vjp =
func.func @f(%x: tensor<f32>) -> tensor<f32> {
  %0 = "mlax.sin"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @f_vjp(tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.vjp = {callee = @f, argnums = array<i64: 0>}}
func.func @dfdx(%x: tensor<f32>) -> tensor<f32> {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %0:2 = func.call @f_vjp(%x, %one) : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %0#1 : tensor<f32>
}
func.func private @dfdx_vjp(tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.vjp = {callee = @dfdx, argnums = array<i64: 0>}}
