// RUN: %mlax-opt %s --mlax-lower-control-flow --split-input-file --verify-diagnostics

// A scan's slices and stacked outputs are tensor.extract_slice / insert_slice rows of static
// shape: a dynamic one is reported at the call.
func.func @dynamic_slice(%c: tensor<f32>, %xs: tensor<5x?xf32>) -> (tensor<f32>, tensor<5x?xf32>) {
  // expected-error@+1 {{mlax-lower-control-flow: a scanned slice of type tensor<?xf32> needs a static shape}}
  %0:2 = func.call @scan(%c, %xs) : (tensor<f32>, tensor<5x?xf32>) -> (tensor<f32>, tensor<5x?xf32>)
  return %0#0, %0#1 : tensor<f32>, tensor<5x?xf32>
}
func.func private @scan(tensor<f32>, tensor<5x?xf32>) -> (tensor<f32>, tensor<5x?xf32>) attributes {mlax.scan = {body = @step, length = 5 : i64, reverse = false, num_carry = 1 : i64, num_consts = 0 : i64}}
func.func private @step(%c: tensor<f32>, %x: tensor<?xf32>) -> (tensor<f32>, tensor<?xf32>) {
  return %c, %x : tensor<f32>, tensor<?xf32>
}
