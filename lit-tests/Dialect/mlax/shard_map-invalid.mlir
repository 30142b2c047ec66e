// RUN: %mlax-opt %s --split-input-file --verify-diagnostics

// The checks of a shard_map declaration: its specs against its axes, the declared (global)
// types against them, and the callee's (local) types.

// expected-error@+1 {{mlax.shard_map declaration @sm: the sharding P('z') of in_specs[0] (tensor<8xf32>) names axis 'z', which is not an axis of the mesh {x: 2}}}
func.func private @sm(tensor<8xf32>) -> tensor<8xf32> attributes {mlax.shard_map = {callee = @body, axis_names = ["x"], axis_sizes = array<i64: 2>, in_specs = [[["z"]]], out_specs = [[["x"]]]}}
func.func private @body(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error@+1 {{mlax.shard_map declaration @sm: the sharding P(('x', 'x')) of in_specs[0] (tensor<8xf32>) uses mesh axis 'x' more than once}}
func.func private @sm(tensor<8xf32>) -> tensor<8xf32> attributes {mlax.shard_map = {callee = @body, axis_names = ["x"], axis_sizes = array<i64: 2>, in_specs = [[["x", "x"]]], out_specs = [[["x"]]]}}
func.func private @body(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error@+1 {{mlax.shard_map declaration @sm: the sharding P('x') of out_specs[0] (tensor<7xf32>) implies that the global size of its dimension 0 should be divisible by 2, but it is equal to 7 (full shape: (7,))}}
func.func private @sm(tensor<8xf32>) -> tensor<7xf32> attributes {mlax.shard_map = {callee = @body, axis_names = ["x"], axis_sizes = array<i64: 2>, in_specs = [[["x"]]], out_specs = [[["x"]]]}}
func.func private @body(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error@+1 {{mlax.shard_map declaration @sm: in_specs[0] (tensor<8xf32>) has rank 1 but its sharding P('x', None) has 2 entries (a spec has one entry per dimension)}}
func.func private @sm(tensor<8xf32>) -> tensor<8xf32> attributes {mlax.shard_map = {callee = @body, axis_names = ["x"], axis_sizes = array<i64: 2>, in_specs = [[["x"], []]], out_specs = [[["x"]]]}}
func.func private @body(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// The body's types are the local ones: 8 split over x of size 2 is 4 per device, not 8.
// expected-error@+1 {{mlax.shard_map declaration @sm: the declaration has type (tensor<8xf32>) -> tensor<8xf32> but callee @body requires (tensor<16xf32>) -> tensor<16xf32>}}
func.func private @sm(tensor<8xf32>) -> tensor<8xf32> attributes {mlax.shard_map = {callee = @body, axis_names = ["x"], axis_sizes = array<i64: 2>, in_specs = [[["x"]]], out_specs = [[["x"]]]}}
func.func private @body(%a: tensor<8xf32>) -> tensor<8xf32> {
  return %a : tensor<8xf32>
}

// -----

// expected-error@+1 {{mlax.shard_map declaration @sm: in_specs has 2 spec(s) but the declaration has 1 arguments}}
func.func private @sm(tensor<8xf32>) -> tensor<8xf32> attributes {mlax.shard_map = {callee = @body, axis_names = ["x"], axis_sizes = array<i64: 2>, in_specs = [[["x"]], [[]]], out_specs = [[["x"]]]}}
func.func private @body(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error@+1 {{mlax.shard_map declaration @sm: invalid axis_names / axis_sizes: 1 axis name(s) but 2 size(s)}}
func.func private @sm(tensor<8xf32>) -> tensor<8xf32> attributes {mlax.shard_map = {callee = @body, axis_names = ["x"], axis_sizes = array<i64: 2, 2>, in_specs = [[["x"]]], out_specs = [[["x"]]]}}
func.func private @body(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error@+1 {{mlax.shard_map declaration @sm: field 'in_specs' must be an array of partition specs ([[["x"], []], [[]]]), got [["x"]]}}
func.func private @sm(tensor<8xf32>) -> tensor<8xf32> attributes {mlax.shard_map = {callee = @body, axis_names = ["x"], axis_sizes = array<i64: 2>, in_specs = [["x"]], out_specs = [[["x"]]]}}
func.func private @body(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error@+1 {{mlax.shard_map declaration @sm: missing field 'out_specs'}}
func.func private @sm(tensor<8xf32>) -> tensor<8xf32> attributes {mlax.shard_map = {callee = @body, axis_names = ["x"], axis_sizes = array<i64: 2>, in_specs = [[["x"]]]}}
func.func private @body(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// A mesh's devices are listed (and simulated, and named in collectives): a mesh too large to
// list is refused before it is (it once grew mlax-opt past 13 GB).
// expected-error@+1 {{mlax.shard_map declaration @sm: invalid axis_names / axis_sizes: axis sizes [1099511627776, 2] make 2199023255552 devices, more than mlax handles (1048576)}}
func.func private @sm(tensor<8xf32>) -> tensor<8xf32> attributes {mlax.shard_map = {callee = @body, axis_names = ["x", "y"], axis_sizes = array<i64: 1099511627776, 2>, in_specs = [[[]]], out_specs = [[[]]]}}
func.func private @body(%a: tensor<8xf32>) -> tensor<8xf32> {
  return %a : tensor<8xf32>
}
