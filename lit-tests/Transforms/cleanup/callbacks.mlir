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

// An io callback is an effect: DCE keeps it with its results unused, CSE merges no two.
// CHECK-LABEL: func.func @test_no_io_dce
// CHECK-NEXT:    call @read(%arg0)
// CHECK-NEXT:    call @read(%arg0)
// CHECK-NEXT:    return %arg0
func.func @test_no_io_dce(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @read(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = func.call @read(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %x : tensor<3xf32>
}
func.func private @read(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.callback = {id = 2 : i64, kind = "io", ordered = false, name = "read"}}

// A call whose results are unused goes when what it calls has no effect, however deep: here
// a nested function whose cond's branch raises through a pure callback (equinox's error_if
// on a value nothing reads), as jax's DCE drops it. A cond whose branch prints stays.
// CHECK-LABEL: func.func @test_dead_nested_calls
// CHECK-NEXT:    call @printing_cond(
// CHECK-NEXT:    return %arg0
func.func @test_dead_nested_calls(%x: tensor<3xf32>, %p: tensor<i1>) -> tensor<3xf32> {
  %0 = func.call @checked(%x, %p) : (tensor<3xf32>, tensor<i1>) -> tensor<3xf32>
  %1 = func.call @printing_cond(%p, %x) : (tensor<i1>, tensor<3xf32>) -> tensor<3xf32>
  return %x : tensor<3xf32>
}
func.func private @checked(%x: tensor<3xf32>, %p: tensor<i1>) -> tensor<3xf32> {
  %0 = func.call @raising_cond(%p, %x) : (tensor<i1>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @pass_through(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
func.func private @raise(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @twice(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @print_it(%x: tensor<3xf32>) -> tensor<3xf32> {
  func.call @show(%x) : (tensor<3xf32>) -> ()
  return %x : tensor<3xf32>
}
func.func private @raising_cond(tensor<i1>, tensor<3xf32>) -> tensor<3xf32> attributes {mlax.cond = {branches = [@pass_through, @raise]}}
func.func private @printing_cond(tensor<i1>, tensor<3xf32>) -> tensor<3xf32> attributes {mlax.cond = {branches = [@pass_through, @print_it]}}
