// RUN: %mlax-opt --mlax-partition --split-input-file %s | FileCheck %s

// A cond runs on the blocks: each branch becomes a per-device copy, partitioned with the
// operands' specs (@helper, a private call, is inlined first). Every branch returns the
// first splitting spec any branch gives: the constraint in @double makes it ["x"] on both.
// CHECK-LABEL: func.func @test_cond_on_blocks(%arg0: tensor<4xf32> {mlax.sharding = {{\[\[}}"x"]]}, %arg1: tensor<i1> {mlax.sharding = []}) -> (tensor<4xf32> {mlax.sharding = {{\[\[}}"x"]]}) attributes {mlax.partitioned}
// CHECK-NEXT:    %[[E:.*]] = "mlax.exp"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = call @branch_partitioned(%arg1, %[[E]]) : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    return %[[R]]
// CHECK-LABEL: func.func private @same_partitioned(%arg0: tensor<4xf32>) -> tensor<4xf32>
// CHECK-LABEL: func.func private @double_partitioned(%arg0: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT:     sharding_constraint
// CHECK:       func.func private @branch_partitioned(tensor<i1>, tensor<4xf32>) -> tensor<4xf32> attributes {mlax.cond = {branches = [@same_partitioned, @double_partitioned]}}
// CHECK-NOT:   @helper
// CHECK-NOT:   func.func private @branch(
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func private @double(%x: tensor<8xf32>) -> tensor<8xf32> {
    %0 = "mlax.add"(%x, %x) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %1 = "mlax.sharding_constraint"(%0) {sharding = [["x"]]} : (tensor<8xf32>) -> tensor<8xf32>
    return %1 : tensor<8xf32>
  }
  func.func private @same(%x: tensor<8xf32>) -> tensor<8xf32> {
    return %x : tensor<8xf32>
  }
  func.func private @branch(tensor<i1>, tensor<8xf32>) -> tensor<8xf32> attributes {mlax.cond = {branches = [@same, @double]}}
  func.func private @helper(%x: tensor<8xf32>) -> tensor<8xf32> {
    %0 = "mlax.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func @test_cond_on_blocks(%a: tensor<8xf32> {mlax.sharding = [["x"]]}, %p: tensor<i1>) -> tensor<8xf32> {
    %0 = func.call @helper(%a) : (tensor<8xf32>) -> tensor<8xf32>
    %1 = func.call @branch(%p, %0) : (tensor<i1>, tensor<8xf32>) -> tensor<8xf32>
    return %1 : tensor<8xf32>
  }
}

// -----

// A scan: the carry keeps the spec it enters with (["x"] from the argument), the scanned
// operand is whole along the scanned dimension and split as given on the others (its rows
// over "y", so each step's row is ["y"] in the body); the stacked result gets the body's
// spec behind a whole leading dimension. The body's sum over the split row finishes with a
// psum over "y".
// CHECK-LABEL: func.func @test_scan_carries_its_sharding(%arg0: tensor<4xf32> {mlax.sharding = {{\[\[}}"x"]]}, %arg1: tensor<5x4xf32> {mlax.sharding = {{\[\[}}], ["y"]]})
// CHECK-SAME:    -> (tensor<4xf32> {mlax.sharding = {{\[\[}}"x"]]}, tensor<5xf32> {mlax.sharding = {{\[\[}}]]})
// CHECK:         call @scan_partitioned(%arg0, %arg1) : (tensor<4xf32>, tensor<5x4xf32>) -> (tensor<4xf32>, tensor<5xf32>)
// The carry and the row meet split differently: the row is resharded (gathered, sliced).
// CHECK-LABEL: func.func private @step_partitioned{{.*}}(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>)
// CHECK:         "mlax.all_gather"(%arg1) {axes = ["y"]
// CHECK:         "mlax.dynamic_slice"
// CHECK:         "mlax.psum"({{.*}}) {axes = ["y"]}
// CHECK:       func.func private @scan_partitioned({{.*}}) attributes {mlax.scan = {body = @step_partitioned{{.*}}, length = 5 : i64, num_carry = 1 : i64, num_consts = 0 : i64, reverse = false}}
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func private @step(%c: tensor<8xf32>, %r: tensor<8xf32>) -> (tensor<8xf32>, tensor<f32>) {
    %0 = "mlax.add"(%c, %r) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %1 = "mlax.reduce_sum"(%r) {dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<f32>
    return %0, %1 : tensor<8xf32>, tensor<f32>
  }
  func.func private @scan(tensor<8xf32>, tensor<5x8xf32>) -> (tensor<8xf32>, tensor<5xf32>) attributes {mlax.scan = {body = @step, length = 5 : i64, num_carry = 1 : i64, num_consts = 0 : i64, reverse = false}}
  func.func @test_scan_carries_its_sharding(%c: tensor<8xf32> {mlax.sharding = [["x"]]}, %xs: tensor<5x8xf32> {mlax.sharding = [[], ["y"]]}) -> (tensor<8xf32>, tensor<5xf32>) {
    %0:2 = func.call @scan(%c, %xs) : (tensor<8xf32>, tensor<5x8xf32>) -> (tensor<8xf32>, tensor<5xf32>)
    return %0#0, %0#1 : tensor<8xf32>, tensor<5xf32>
  }
}

// -----

// A while loop whose carry enters whole but whose body splits it (a constraint): the carry
// takes the body's spec, ["x"], from the start (the operand is sliced to it once, the result
// gathered once for the replicated result), and the cond's predicate, a reduction over the
// split carry, is completed by a psum.
// CHECK-LABEL: func.func @test_while_takes_the_body_spec(%arg0: tensor<8xf32> {mlax.sharding = {{\[\[}}]]}) -> (tensor<8xf32> {mlax.sharding = {{\[\[}}]]})
// CHECK:         %[[S:.*]] = "mlax.dynamic_slice"(%arg0
// CHECK:         %[[R:.*]] = call @loop_partitioned(%[[S]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         "mlax.all_gather"(%[[R]])
// CHECK-LABEL: func.func private @test_partitioned(%arg0: tensor<4xf32>) -> tensor<i1>
// CHECK:         "mlax.psum"
// CHECK:       attributes {mlax.while = {body = @halve_partitioned{{.*}}, cond = @test_partitioned}}
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func private @test(%c: tensor<8xf32>) -> tensor<i1> {
    %0 = "mlax.reduce_sum"(%c) {dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<f32>
    %1 = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %2 = "mlax.compare"(%0, %1) {comparison_direction = "GT"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    return %2 : tensor<i1>
  }
  func.func private @halve(%c: tensor<8xf32>) -> tensor<8xf32> {
    %h = "mlax.constant"() {value = dense<0.5> : tensor<8xf32>} : () -> tensor<8xf32>
    %0 = "mlax.mul"(%c, %h) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %1 = "mlax.sharding_constraint"(%0) {sharding = [["x"]]} : (tensor<8xf32>) -> tensor<8xf32>
    return %1 : tensor<8xf32>
  }
  func.func private @loop(tensor<8xf32>) -> tensor<8xf32> attributes {mlax.while = {cond = @test, body = @halve}}
  func.func @test_while_takes_the_body_spec(%c: tensor<8xf32>) -> tensor<8xf32> {
    %0 = func.call @loop(%c) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
