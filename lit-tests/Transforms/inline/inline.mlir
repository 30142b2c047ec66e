// RUN: %mlax-opt --mlax-inline %s | FileCheck %s

// A call to a private function with a body becomes the body; nested calls too; the private
// functions nothing calls any more are erased.
// CHECK-LABEL: func.func @test_main
// CHECK-NEXT:    %[[S:.*]] = "mlax.sin"(%arg0)
// CHECK-NEXT:    %[[M:.*]] = "mlax.mul"(%[[S]], %arg1)
// CHECK-NEXT:    %[[E:.*]] = "mlax.exp"(%[[M]])
// CHECK-NEXT:    return %[[E]], %[[M]]
// CHECK-NOT:   func.func private @inner
// CHECK-NOT:   func.func private @outer
func.func @test_main(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:2 = func.call @outer(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}
func.func private @outer(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %s = "mlax.sin"(%a) : (tensor<3xf32>) -> tensor<3xf32>
  %m = func.call @inner(%s, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %e = "mlax.exp"(%m) : (tensor<3xf32>) -> tensor<3xf32>
  return %e, %m : tensor<3xf32>, tensor<3xf32>
}
func.func private @inner(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %m = "mlax.mul"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %m : tensor<3xf32>
}

// Public functions and declarations are not inlined (nor erased).
// CHECK-LABEL: func.func @test_public_callee
// CHECK:         call @public_helper
// CHECK:         call @declared
// CHECK:       func.func @public_helper
// CHECK:       func.func private @declared
func.func @test_public_callee(%x: tensor<f32>) -> tensor<f32> {
  %0 = func.call @public_helper(%x) : (tensor<f32>) -> tensor<f32>
  %1 = func.call @declared(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func @public_helper(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func private @declared(tensor<f32>) -> tensor<f32>
