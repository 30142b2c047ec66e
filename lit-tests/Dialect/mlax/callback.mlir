// RUN: %mlax-roundtrip | FileCheck %s
// RUN: %mlir-opt --irdl-file=%irdl %s | %mlir-opt --irdl-file=%irdl | FileCheck %s

// A host callback is a body-less private function with an mlax.callback dictionary; its type
// is the callback's own (operands of mixed types, results for a pure callback).
// CHECK-LABEL: func.func @test_callbacks
// CHECK:         call @show(%arg0, %arg1) : (tensor<3xf32>, tensor<i32>) -> ()
// CHECK:         call @twice(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK:       func.func private @show(tensor<3xf32>, tensor<i32>) attributes {mlax.callback = {id = 0 : i64, kind = "debug", name = "show", ordered = true}}
// CHECK:       func.func private @twice(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.callback = {id = 1 : i64, kind = "pure", name = "twice", ordered = false, vmap_method = "expand_dims"}}
func.func @test_callbacks(%x: tensor<3xf32>, %n: tensor<i32>) -> tensor<3xf32> {
  func.call @show(%x, %n) : (tensor<3xf32>, tensor<i32>) -> ()
  %0 = func.call @twice(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @show(tensor<3xf32>, tensor<i32>) attributes {mlax.callback = {id = 0 : i64, kind = "debug", ordered = true, name = "show"}}
func.func private @twice(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.callback = {id = 1 : i64, kind = "pure", ordered = false, name = "twice", vmap_method = "expand_dims"}}
