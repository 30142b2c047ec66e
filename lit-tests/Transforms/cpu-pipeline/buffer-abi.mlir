// RUN: %mlax-opt --mlax-buffer-abi %s | FileCheck %s

// Inputs are the caller's (not writable) and no buffer overlaps another (noalias),
// results too (they become out-parameters).
// CHECK-LABEL: func.func @jit.test_attributes
// CHECK-SAME:    (%arg0: tensor<4xf32> {bufferization.writable = false, llvm.noalias},
// CHECK-SAME:     %arg1: tensor<2xi32> {bufferization.writable = false, llvm.noalias})
// CHECK-SAME:    -> (tensor<4xf32> {llvm.noalias})
func.func @test_attributes(%x: tensor<4xf32>, %i: tensor<2xi32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// A size-0 buffer crosses the boundary as tensor<0xT>; inside, tensor.empty of its real type.
// CHECK-LABEL: func.func @jit.test_empty
// CHECK-SAME:    (%arg0: tensor<0xf32> {{.*}}) -> (tensor<0xf32> {llvm.noalias}, tensor<2xf32> {llvm.noalias})
// CHECK:         %[[LOCAL:.*]] = tensor.empty() : tensor<2x0xf32>
// CHECK:         %[[SUM:.*]] = linalg.reduce ins(%[[LOCAL]] : tensor<2x0xf32>)
// CHECK:         %[[OUT:.*]] = tensor.empty() : tensor<0xf32>
// CHECK:         return %[[OUT]], %[[SUM]]
func.func @test_empty(%x: tensor<2x0xf32>) -> (tensor<2x0xf32>, tensor<2xf32>) {
  %init = tensor.empty() : tensor<2xf32>
  %sum = linalg.reduce ins(%x : tensor<2x0xf32>) outs(%init : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %x, %sum : tensor<2x0xf32>, tensor<2xf32>
}

// Private functions and declarations keep their signatures.
// CHECK-LABEL: func.func private @test_private(%arg0: tensor<2x0xf32>) -> tensor<2x0xf32>
func.func private @test_private(%x: tensor<2x0xf32>) -> tensor<2x0xf32> {
  return %x : tensor<2x0xf32>
}
// CHECK-LABEL: func.func private @test_declaration(tensor<4xf32>)
func.func private @test_declaration(tensor<4xf32>)

// A public function named like a C function the code calls is renamed, calls included.
// CHECK-LABEL: func.func @jit.erfc
// CHECK-LABEL: func.func @jit.test_caller
// CHECK:         call @jit.erfc(%arg0)
func.func @erfc(%x: tensor<4xf64>) -> tensor<4xf64> {
  return %x : tensor<4xf64>
}
func.func @test_caller(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = func.call @erfc(%x) : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}
