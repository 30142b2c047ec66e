// The XLA backend runs mlax IR (mlax-stablehlo-pipeline, then XLA); the interpreter agrees.
// RUN: %mlax-run %s --entry mlp --backend xla --input '[[1, -2, 0.5]]' --input '[[0.5, 1], [-1, 0.25], [2, -0.5]]' | FileCheck %s
// RUN: %mlax-run %s --entry mlp --backend interpreter --input '[[1, -2, 0.5]]' --input '[[0.5, 1], [-1, 0.25], [2, -0.5]]' | FileCheck %s
// RUN: %mlax-run %s --entry count --backend xla --input 5 | FileCheck %s --check-prefix=LOOP
// RUN: %mlax-opt %s --mlax-stablehlo-pipeline | FileCheck %s --check-prefix=IR

// tanh([1, -2, 0.5] @ w) = tanh([3.5, 0.25]) (f32)
// CHECK: result[0]: tensor<1x2xf32> = {{\[\[}}0.99817{{[0-9]+}}, 0.24491{{[0-9]+}}]]
// IR-LABEL: func.func @mlp
// IR: "stablehlo.dot_general"
// IR: "stablehlo.tanh"
func.func @mlp(%x: tensor<1x3xf32>, %w: tensor<3x2xf32>) -> tensor<1x2xf32> {
  %0 = "mlax.dot_general"(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = f32} : (tensor<1x3xf32>, tensor<3x2xf32>) -> tensor<1x2xf32>
  %1 = "mlax.tanh"(%0) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  return %1 : tensor<1x2xf32>
}

// A while loop doubling a counter until it passes 100: 5 -> 10 -> ... -> 160.
// LOOP: result[0]: tensor<i32> = 160
// IR-LABEL: func.func @count
// IR: "stablehlo.while"
func.func @count(%n: tensor<i32>) -> tensor<i32> {
  %0 = call @loop(%n) : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}
func.func private @below(%n: tensor<i32>) -> tensor<i1> {
  %limit = "mlax.constant"() {value = dense<100> : tensor<i32>} : () -> tensor<i32>
  %0 = "mlax.compare"(%n, %limit) {comparison_direction = "LE"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func private @double(%n: tensor<i32>) -> tensor<i32> {
  %0 = "mlax.add"(%n, %n) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}
func.func private @loop(tensor<i32>) -> tensor<i32> attributes {mlax.while = {body = @double, cond = @below}}
