// RUN: %mlax-roundtrip | FileCheck %s
// RUN: %mlir-opt --irdl-file=%irdl %s | %mlir-opt --irdl-file=%irdl | FileCheck %s

// A user primitive (jax.extend.core.Primitive bound on mlax values) is a body-less private
// function with an mlax.user_primitive dictionary; its type is the primitive's own.
// CHECK-LABEL: func.func @test_user_primitive
// CHECK:         %[[S:.*]]:2 = call @sincos_prim(%arg0) : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK:       func.func private @sincos_prim(tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.user_primitive = {id = 4 : i64, name = "sincos"}}
func.func @test_user_primitive(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0:2 = func.call @sincos_prim(%x) : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0 : tensor<3xf32>
}
func.func private @sincos_prim(tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.user_primitive = {id = 4 : i64, name = "sincos"}}
