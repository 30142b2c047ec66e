// RUN: %mlax-opt %s --split-input-file --verify-diagnostics

// The checks of a callback declaration: its fields, and that it is a private declaration.

// expected-error@+1 {{mlax.callback declaration @cb: kind must be one of 'pure', 'debug', 'io', got 'impure'}}
func.func private @cb(tensor<3xf32>) attributes {mlax.callback = {id = 0 : i64, kind = "impure", ordered = false, name = "f"}}

// -----

// expected-error@+1 {{mlax.callback declaration @cb: missing field 'name'}}
func.func private @cb(tensor<3xf32>) attributes {mlax.callback = {id = 0 : i64, kind = "debug", ordered = false}}

// -----

// expected-error@+1 {{mlax.callback declaration @cb: vmap_method 'vectorized' needs kind 'pure' and one of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', 'legacy_vectorized'}}
func.func private @cb(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.callback = {id = 0 : i64, kind = "pure", ordered = false, name = "f", vmap_method = "vectorized"}}

// -----

// expected-error@+1 {{mlax.callback declaration @cb: field 'ordered' must be true or false, got 1 : i64}}
func.func private @cb(tensor<3xf32>) attributes {mlax.callback = {id = 0 : i64, kind = "debug", ordered = 1, name = "f"}}

// -----

// expected-error@+1 {{mlax.callback declaration @cb: id must be >= 0, got -3}}
func.func private @cb(tensor<3xf32>) attributes {mlax.callback = {id = -3 : i64, kind = "debug", ordered = false, name = "f"}}

// -----

// A public function cannot be a declaration (MLIR's own verifier); one with a body is not one.
// expected-error@+1 {{mlax.callback declaration @cb: must not have a body}}
func.func private @cb(%x: tensor<3xf32>) attributes {mlax.callback = {id = 0 : i64, kind = "debug", ordered = false, name = "f"}} {
  return
}
