// RUN: %mlax-opt --mlax-cleanup %s | FileCheck %s

// DCE drops a pure callback whose result is unused (jax does) and never a debug callback;
// CSE merges neither (they are calls, not mlax ops).
// CHECK-LABEL: func.func @test_callbacks
// CHECK-NEXT:    call @show(%arg0)
// CHECK-NEXT:    %[[A:.*]] = call @twice(%arg0)
// CHECK-NEXT:    %[[B:.*]] = call @twice(%arg0)
// CHECK-NEXT:    call @show(%arg0)
// CHECK-NEXT:    %[[S:.*]] = "mlax.add"(%[[A]], %[[B]])
// CHECK-NEXT:    return %[[S]]
func.func @test_callbacks(%x: tensor<3xf32>) -> tensor<3xf32> {
  func.call @show(%x) : (tensor<3xf32>) -> ()
  %0 = func.call @twice(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = func.call @twice(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = func.call @twice(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.call @show(%x) : (tensor<3xf32>) -> ()
  %3 = "mlax.add"(%0, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %3 : tensor<3xf32>
}
func.func private @show(tensor<3xf32>) attributes {mlax.callback = {id = 0 : i64, kind = "debug", ordered = false, name = "show"}}
func.func private @twice(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.callback = {id = 1 : i64, kind = "pure", ordered = false, name = "twice"}}
