// RUN: %mlax-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect --mlax-lower-to-stablehlo

// A declaration whose type does not follow from its body (length 5, xs of 4 rows) is refused
// at the declaration.
func.func @f(%c: tensor<f32>, %xs: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %0:2 = func.call @scan(%c, %xs) : (tensor<f32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<f32>, tensor<4xf32>
}
// expected-error@+1 {{mlax.scan declaration @scan: the declaration has type (tensor<f32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) but body @step requires (tensor<f32>, tensor<5xf32>) -> (tensor<f32>, tensor<5xf32>)}}
func.func private @scan(tensor<f32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) attributes {mlax.scan = {body = @step, length = 5 : i64, reverse = false, num_carry = 1 : i64, num_consts = 0 : i64}}
func.func private @step(%c: tensor<f32>, %x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  return %c, %x : tensor<f32>, tensor<f32>
}

// -----

// A cond whose branch calls the cond again would be lowered forever: refused.
func.func @g(%p: tensor<i1>, %x: tensor<f32>) -> tensor<f32> {
  %0 = func.call @cond(%p, %x) : (tensor<i1>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// expected-error@+1 {{mlax.cond declaration @cond: refers to itself through its callees}}
func.func private @cond(tensor<i1>, tensor<f32>) -> tensor<f32> attributes {mlax.cond = {branches = [@loop, @loop]}}
func.func private @loop(%x: tensor<f32>) -> tensor<f32> {
  %t = "mlax.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %0 = func.call @cond(%t, %x) : (tensor<i1>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
