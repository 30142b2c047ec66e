// RUN: %mlax-opt %s --split-input-file --verify-diagnostics

// The checks of a control-flow declaration: its type follows from its bodies, branches
// agree, loop carries keep their types, scanned operands have the leading dimension length.

func.func private @neg(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @total(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// expected-error@+1 {{mlax.cond declaration @if: branches[1] function @total has type (tensor<3xf32>) -> tensor<f32> but branches [@neg, @total] requires (tensor<3xf32>) -> tensor<3xf32>}}
func.func private @if(tensor<i1>, tensor<3xf32>) -> tensor<3xf32> attributes {mlax.cond = {branches = [@neg, @total]}}

// -----

func.func private @neg(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// A three-way switch takes an i32 index, not an i1.
// expected-error@+1 {{the declaration has type (tensor<i1>, tensor<3xf32>) -> tensor<3xf32> but branches [@neg, @neg, @neg] requires (tensor<i32>, tensor<3xf32>) -> tensor<3xf32>}}
func.func private @switch(tensor<i1>, tensor<3xf32>) -> tensor<3xf32> attributes {mlax.cond = {branches = [@neg, @neg, @neg]}}

// -----

func.func private @small(%x: tensor<3xf32>) -> tensor<i1> {
  %t = "mlax.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  return %t : tensor<i1>
}
func.func private @widen(%x: tensor<3xf32>) -> tensor<3xf64> {
  %0 = "mlax.convert"(%x) {new_dtype = f64} : (tensor<3xf32>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}
// expected-error@+1 {{mlax.while declaration @loop: body carry 0 enters as tensor<3xf32> but leaves as tensor<3xf64>; a loop-carried value must keep its type}}
func.func private @loop(tensor<3xf32>) -> tensor<3xf64> attributes {mlax.while = {cond = @small, body = @widen}}

// -----

func.func private @step(%c: tensor<f32>, %x: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  return %c, %x : tensor<f32>, tensor<3xf32>
}
// expected-error@+1 {{the declaration has type (tensor<f32>, tensor<4x3xf32>) -> (tensor<f32>, tensor<4x3xf32>) but body @step requires (tensor<f32>, tensor<5x3xf32>) -> (tensor<f32>, tensor<5x3xf32>)}}
func.func private @scan(tensor<f32>, tensor<4x3xf32>) -> (tensor<f32>, tensor<4x3xf32>) attributes {mlax.scan = {body = @step, length = 5 : i64, reverse = false, num_carry = 1 : i64, num_consts = 0 : i64}}

// -----

func.func private @step(%c: tensor<f32>, %x: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  return %c, %x : tensor<f32>, tensor<3xf32>
}
// expected-error@+1 {{field 'reverse' must be true or false, got 1 : i64}}
func.func private @scan(tensor<f32>, tensor<5x3xf32>) -> (tensor<f32>, tensor<5x3xf32>) attributes {mlax.scan = {body = @step, length = 5 : i64, reverse = 1, num_carry = 1 : i64, num_consts = 0 : i64}}

// -----

// Every function a declaration names must exist, not only those its type follows from.
func.func private @neg(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// expected-error@+1 {{mlax.cond declaration @choose: branches[1] @nowhere is not a function of this module}}
func.func private @choose(tensor<i1>, tensor<3xf32>) -> tensor<3xf32> attributes {mlax.cond = {branches = [@neg, @nowhere]}}

// -----

func.func private @neg(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// expected-error@+1 {{mlax.while declaration @loop: cond @nowhere is not a function of this module}}
func.func private @loop(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.while = {cond = @nowhere, body = @neg}}

// -----

// A loop whose body calls the loop itself.
func.func private @small(%x: tensor<f32>) -> tensor<i1> {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %0 = "mlax.compare"(%x, %one) {comparison_direction = "LT"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
// expected-error@+1 {{mlax.while declaration @loop: refers to itself through its callees}}
func.func private @loop(tensor<f32>) -> tensor<f32> attributes {mlax.while = {cond = @small, body = @again}}
func.func private @again(%x: tensor<f32>) -> tensor<f32> {
  %0 = func.call @loop(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
