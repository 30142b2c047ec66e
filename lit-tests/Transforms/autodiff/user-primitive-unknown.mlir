// RUN: %mlax-opt --mlax-expand-transforms %s --verify-diagnostics

// A user primitive's rules live in the process that bound it (its id keys them): IR read from
// text names an id this process does not have, which is an error at the declaration when a
// pass needs the rules (here the lowering).
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @p(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// expected-error@+1 {{mlax-expand-transforms: @p names user primitive 123456 (multiply_add), which this process does not have}}
func.func private @p(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.user_primitive = {id = 123456 : i64, name = "multiply_add"}}
