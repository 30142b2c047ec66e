// RUN: %mlax-opt --mlax-distinct-results %s | FileCheck %s

// A value returned twice: the repeat becomes a copy, so each result gets its own buffer.
// CHECK-LABEL: func.func @test_repeat
// CHECK:         %[[COPY:.*]] = bufferization.alloc_tensor() copy(%arg0) : tensor<4xf32>
// CHECK:         return %arg0, %arg1, %[[COPY]], %arg1
func.func @test_repeat(%x: tensor<4xf32>, %s: f32) -> (tensor<4xf32>, f32, tensor<4xf32>, f32) {
  return %x, %s, %x, %s : tensor<4xf32>, f32, tensor<4xf32>, f32
}

// Distinct values are left alone.
// CHECK-LABEL: func.func @test_distinct
// CHECK-NOT:     bufferization.alloc_tensor
// CHECK:         return %arg0, %arg1
func.func @test_distinct(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  return %x, %y : tensor<4xf32>, tensor<4xf32>
}
