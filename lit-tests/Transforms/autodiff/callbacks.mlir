// RUN: %mlax-opt --mlax-autodiff %s --split-input-file --verify-diagnostics | FileCheck %s

// A debug callback is called on the primal values only, once (jax's debug_callback JVP rule):
// in forward mode and in the primal part of reverse mode, never transposed.
// CHECK-LABEL: func.func private @f_jvp
// CHECK-NEXT:    call @show(%arg0) : (tensor<3xf32>) -> ()
// CHECK-NOT:     call @show
// CHECK:         return
// CHECK-LABEL: func.func private @f_vjp
// CHECK-NEXT:    call @show(%arg0) : (tensor<3xf32>) -> ()
// CHECK-NOT:     call @show
// CHECK:         return
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  func.call @show(%x) : (tensor<3xf32>) -> ()
  %0 = "mlax.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @show(tensor<3xf32>) attributes {mlax.callback = {id = 0 : i64, kind = "debug", ordered = false, name = "show"}}
func.func @test_jvp(%x: tensor<3xf32>, %t: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:2 = func.call @f_jvp(%x, %t) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}
func.func private @f_jvp(tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.jvp = {callee = @f}}
func.func @test_vjp(%x: tensor<3xf32>, %ct: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:2 = func.call @f_vjp(%x, %ct) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}
func.func private @f_vjp(tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.vjp = {callee = @f, argnums = array<i64: 0>}}

// -----

// A pure callback has no derivative: jax's error, at the call.
func.func @h(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{mlax-autodiff: Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while taking gradients. (the callback twice, @twice)}}
  %0 = func.call @twice(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @twice(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.callback = {id = 0 : i64, kind = "pure", ordered = false, name = "twice"}}
func.func private @h_jvp(tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.jvp = {callee = @h}}

// -----

// With no tangent reaching it (an integer operand), a pure callback is a plain primal call.
// CHECK-LABEL: func.func private @k_jvp
// CHECK-NEXT:    %[[R:.*]] = call @count(%arg0) : (tensor<3xi32>) -> tensor<3xf32>
// CHECK:         return %[[R]], %{{.*}}
func.func @k(%n: tensor<3xi32>) -> tensor<3xf32> {
  %0 = func.call @count(%n) : (tensor<3xi32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @count(tensor<3xi32>) -> tensor<3xf32> attributes {mlax.callback = {id = 0 : i64, kind = "pure", ordered = false, name = "count"}}
func.func private @k_jvp(tensor<3xi32>, tensor<3xi32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.jvp = {callee = @k}}

// -----

// An io callback has no derivative either: jax's error, at the call.
func.func @io(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{mlax-autodiff: IO callbacks do not support JVP. (the callback log, @log)}}
  %0 = func.call @log(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @log(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.callback = {id = 0 : i64, kind = "io", ordered = true, name = "log"}}
func.func private @io_jvp(tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.jvp = {callee = @io}}

// -----

// With no tangent reaching it, an io callback is a plain primal call, once.
// CHECK-LABEL: func.func private @io_int_jvp
// CHECK-NEXT:    %[[R:.*]] = call @read(%arg0) : (tensor<3xi32>) -> tensor<3xf32>
// CHECK-NOT:     call @read
// CHECK:         return %[[R]], %{{.*}}
func.func @io_int(%n: tensor<3xi32>) -> tensor<3xf32> {
  %0 = func.call @read(%n) : (tensor<3xi32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @read(tensor<3xi32>) -> tensor<3xf32> attributes {mlax.callback = {id = 0 : i64, kind = "io", ordered = false, name = "read"}}
func.func private @io_int_jvp(tensor<3xi32>, tensor<3xi32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.jvp = {callee = @io_int}}
