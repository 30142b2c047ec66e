// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-cpu-pipeline{to=buffers})' %s | FileCheck %s

// After bufferization a scan's stacked output is written in place: each step's y is computed
// straight into a subview of the caller's output buffer (eliminate-empty-tensors), the carry
// is a fresh buffer per step handed to the next one (allow-return-allocs-from-loops), and
// nothing is copied inside the loop.
// CHECK-LABEL: func.func @jit.test_scan
// CHECK-SAME:    (%[[C0:.*]]: memref<4xf32> {{.*}}, %[[XS:.*]]: memref<6x4xf32> {{.*}}, %[[W:.*]]: memref<4xf32> {{.*}}, %[[C:.*]]: memref<4xf32> {{.*}}, %[[YS:.*]]: memref<6x4xf32> {{.*}})
// CHECK:         scf.for %[[I:.*]] = {{.*}} iter_args(%[[CARRY:.*]] = {{.*}}) -> (memref<4xf32>, i1)
// CHECK-NOT:       memref.copy
// CHECK:           %[[Y:.*]] = memref.subview %[[YS]][%[[I]], 0] [1, 4] [1, 1]
// CHECK-NOT:       memref.copy
// CHECK:           linalg.generic {{.*}} outs(%[[Y]] : memref<4xf32, strided<[1], offset: ?>>)
// CHECK-NOT:       memref.copy
// CHECK:           scf.yield
// CHECK-NEXT:    }
func.func @test_scan(%c: tensor<4xf32>, %xs: tensor<6x4xf32>, %w: tensor<4xf32>) -> (tensor<4xf32>, tensor<6x4xf32>) {
  %0:2 = func.call @scan(%c, %xs, %w) : (tensor<4xf32>, tensor<6x4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<6x4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<6x4xf32>
}
func.func private @scan(tensor<4xf32>, tensor<6x4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<6x4xf32>) attributes {mlax.scan = {body = @step, length = 6 : i64, reverse = false, num_carry = 1 : i64, num_consts = 1 : i64}}
func.func private @step(%c: tensor<4xf32>, %x: tensor<4xf32>, %w: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "mlax.mul"(%c, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "mlax.add"(%0, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1, %0 : tensor<4xf32>, tensor<4xf32>
}
