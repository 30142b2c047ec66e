// RUN: %mlax-opt --mlax-cleanup %s | FileCheck %s

// CSE: an mlax op identical to an earlier one (same name, operands, attributes and result
// types) reuses the earlier op's results.

// CHECK-LABEL: func.func @test_cse_same_op
// CHECK-NEXT:    %[[E:.*]] = "mlax.exp"(%arg0)
// CHECK-NEXT:    %[[S:.*]] = "mlax.add"(%[[E]], %[[E]])
// CHECK-NEXT:    return %[[S]]
func.func @test_cse_same_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "mlax.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "mlax.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "mlax.add"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// Equal constants merge too (attributes compare by value).
// CHECK-LABEL: func.func @test_cse_constants
// CHECK-NEXT:    %[[C:.*]] = "mlax.constant"
// CHECK-NEXT:    %[[S:.*]] = "mlax.sub"(%arg0, %[[C]])
// CHECK-NEXT:    %[[T:.*]] = "mlax.sub"(%[[S]], %[[C]])
// CHECK-NEXT:    return %[[T]]
func.func @test_cse_constants(%x: tensor<2xi32>) -> tensor<2xi32> {
  %a = "mlax.constant"() {value = dense<[3, 4]> : tensor<2xi32>} : () -> tensor<2xi32>
  %b = "mlax.constant"() {value = dense<[3, 4]> : tensor<2xi32>} : () -> tensor<2xi32>
  %0 = "mlax.sub"(%x, %a) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %1 = "mlax.sub"(%0, %b) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %1 : tensor<2xi32>
}

// Unchanged: same op and operand, different attributes.
// CHECK-LABEL: func.func @test_no_cse_different_attributes
// CHECK-COUNT-2: "mlax.broadcast_in_dim"
func.func @test_no_cse_different_attributes(%x: tensor<3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>) {
  %0 = "mlax.broadcast_in_dim"(%x) {shape = array<i64: 3, 3>, broadcast_dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<3x3xf32>
  %1 = "mlax.broadcast_in_dim"(%x) {shape = array<i64: 3, 3>, broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<3x3xf32>
  return %0, %1 : tensor<3x3xf32>, tensor<3x3xf32>
}

// Unchanged: same op, different operands.
// CHECK-LABEL: func.func @test_no_cse_different_operands
// CHECK-COUNT-2: "mlax.tanh"
func.func @test_no_cse_different_operands(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = "mlax.tanh"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "mlax.tanh"(%y) : (tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// Unchanged: operand order matters (CSE does not know that add commutes).
// CHECK-LABEL: func.func @test_no_cse_swapped_operands
// CHECK-COUNT-2: "mlax.sub"
func.func @test_no_cse_swapped_operands(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = "mlax.sub"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "mlax.sub"(%y, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// Unchanged: each function is its own scope, so the exp in the next function stays.
// CHECK-LABEL: func.func @test_no_cse_across_functions_a
// CHECK:         "mlax.exp"
// CHECK-LABEL: func.func @test_no_cse_across_functions_b
// CHECK:         "mlax.exp"
func.func @test_no_cse_across_functions_a(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @test_no_cse_across_functions_b(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
