// RUN: %mlax-opt %s --mlax-partition --split-input-file --verify-diagnostics

// A collective names devices; the global program has none to name.
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_collective_outside_shard_map(%a: tensor<8xf32> {mlax.sharding = [["x"]]}) -> tensor<8xf32> {
    // expected-error@+1 {{mlax-partition: cannot partition mlax.psum: a collective over named axes belongs in a shard_map body}}
    %0 = "mlax.psum"(%a) {axes = ["x"]} : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

// An op of another dialect has no sharding rule.
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_foreign_op(%a: tensor<8xf32> {mlax.sharding = [["x"]]}) -> tensor<8xf32> {
    // expected-error@+1 {{mlax-partition: cannot partition 'arith.addf' (only mlax ops and calls)}}
    %0 = arith.addf %a, %a : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

// A sharding constraint over an axis the mesh does not have.
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_constraint_unknown_axis(%a: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{names axis 'z', which is not an axis of the mesh {x: 2, y: 2}}}
    %0 = "mlax.sharding_constraint"(%a) {sharding = [["z"]]} : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

// A split that does not divide the dimension.
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func @test_constraint_not_divisible(%a: tensor<6xf32>) -> tensor<6xf32> {
    // expected-error@+1 {{global size of its dimension 0 should be divisible by 4, but it is equal to 6}}
    %0 = "mlax.sharding_constraint"(%a) {sharding = [["x", "y"]]} : (tensor<6xf32>) -> tensor<6xf32>
    return %0 : tensor<6xf32>
  }
}

// -----

// Transformations must be resolved first.
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func private @g(%x: tensor<8xf32>) -> tensor<8xf32> {
    %0 = "mlax.sin"(%x) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  // expected-error@+1 {{mlax-partition: the jvp declaration @g_jvp must be resolved first (run mlax-expand-transforms)}}
  func.func private @g_jvp(tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) attributes {mlax.jvp = {callee = @g}}
  func.func @test_unresolved_transform(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
    %0:2 = func.call @g_jvp(%a, %a) : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
    return %0#0, %0#1 : tensor<8xf32>, tensor<8xf32>
  }
}

// -----

// An argument spec that does not divide its dimension, reported at the argument.
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  // expected-error@+1 {{the sharding P(('x', 'y')) of argument 0 of @test_argument_not_divisible implies that the global size of its dimension 0 should be divisible by 4}}
  func.func @test_argument_not_divisible(%a: tensor<6xf32> {mlax.sharding = [["x", "y"]]}) -> tensor<6xf32> {
    return %a : tensor<6xf32>
  }
}

// -----

// A mesh with more devices than mlax lists (its device ids, replica groups) is refused.
// expected-error@+1 {{mlax-partition: invalid mesh: axis sizes [1099511627776] make 1099511627776 devices, more than mlax handles (1048576)}}
module attributes {mlax.mesh = {axis_names = ["x"], axis_sizes = array<i64: 1099511627776>, device_ids = array<i64: 0, 1>}} {
  func.func @test_huge_mesh(%a: tensor<8xf32> {mlax.sharding = [["x"]]}) -> tensor<8xf32> {
    return %a : tensor<8xf32>
  }
}
