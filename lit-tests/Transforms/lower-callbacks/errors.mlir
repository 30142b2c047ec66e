// RUN: %mlax-opt %s --mlax-lower-callbacks --split-input-file --verify-diagnostics

// A debug callback has no results.
// expected-error@+1 {{mlax.callback declaration @show: a debug callback has no results, but the declaration's type is (tensor<f32>) -> tensor<f32>}}
func.func private @show(tensor<f32>) -> tensor<f32> attributes {mlax.callback = {id = 0 : i64, kind = "debug", ordered = false, name = "show"}}
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %0 = func.call @show(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
