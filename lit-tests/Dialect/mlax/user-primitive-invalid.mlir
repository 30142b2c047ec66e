// RUN: %mlax-opt %s --split-input-file --verify-diagnostics

// The checks of a user primitive declaration: its fields, and that it is a private declaration.

// expected-error@+1 {{mlax.user_primitive declaration @p: id must be >= 0, got -1}}
func.func private @p(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.user_primitive = {id = -1 : i64, name = "p"}}

// -----

// expected-error@+1 {{mlax.user_primitive declaration @p: missing field 'name'}}
func.func private @p(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.user_primitive = {id = 0 : i64}}

// -----

// expected-error@+1 {{mlax.user_primitive declaration @p: must not have a body}}
func.func private @p(%x: tensor<3xf32>) -> tensor<3xf32> attributes {mlax.user_primitive = {id = 0 : i64, name = "p"}} {
  return %x : tensor<3xf32>
}
