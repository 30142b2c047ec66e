// RUN: %mlax-opt --mlax-private-fills %s | FileCheck %s
// RUN: %mlax-opt --mlax-private-fills %s | %mlir-opt > /dev/null

// One zero fill (what cse leaves of every product's init) overwritten by two matmuls and an
// scf.for: each gets a fill of its own just before it, and the shared one goes.
// CHECK-LABEL: func.func @test_shared_fill
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK-NEXT:    %[[F1:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<2x4xf32>)
// CHECK-NEXT:    linalg.matmul ins(%arg0, %arg1 : tensor<2x3xf32>, tensor<3x4xf32>) outs(%[[F1]] : tensor<2x4xf32>)
// CHECK-NEXT:    %[[F2:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<2x4xf32>)
// CHECK-NEXT:    linalg.matmul ins(%arg0, %arg2 : tensor<2x3xf32>, tensor<3x4xf32>) outs(%[[F2]] : tensor<2x4xf32>)
// CHECK:         %[[F3:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<2x4xf32>)
// CHECK-NEXT:    scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[F3]])
// CHECK-NOT:     linalg.fill
// CHECK:         return
func.func @test_shared_fill(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<3x4xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x4xf32>) -> tensor<2x4xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) outs(%init : tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = linalg.matmul ins(%a, %c : tensor<2x3xf32>, tensor<3x4xf32>) outs(%init : tensor<2x4xf32>) -> tensor<2x4xf32>
  %lb = arith.constant 0 : index
  %ub = arith.constant 3 : index
  %step = arith.constant 1 : index
  %2 = scf.for %i = %lb to %ub step %step iter_args(%acc = %init) -> tensor<2x4xf32> {
    %next = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
    scf.yield %next : tensor<2x4xf32>
  }
  return %0, %1, %2 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// A fill also read as an input: the reader keeps the original, the destination gets a clone.
// CHECK-LABEL: func.func @test_fill_read_and_written
// CHECK:         %[[F0:.*]] = linalg.fill
// CHECK-NEXT:    %[[F1:.*]] = linalg.fill
// CHECK-NEXT:    linalg.matmul ins(%[[F0]], %arg1 : tensor<2x3xf32>, tensor<3x3xf32>) outs(%[[F1]] : tensor<2x3xf32>)
func.func @test_fill_read_and_written(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) -> tensor<2x3xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = linalg.matmul ins(%init, %b : tensor<2x3xf32>, tensor<3x3xf32>) outs(%init : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// A fill with one use, or only read, is left alone: nothing would be copied.
// CHECK-LABEL: func.func @test_no_shared_fill
// CHECK-COUNT-2: linalg.fill
// CHECK-NOT:     linalg.fill
func.func @test_no_shared_fill(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<2x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x4xf32>) -> tensor<2x4xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) outs(%init : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %read = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = arith.addf %read, %a : tensor<2x3xf32>
  %2 = arith.addf %read, %1 : tensor<2x3xf32>
  return %0, %2 : tensor<2x4xf32>, tensor<2x3xf32>
}
