// RUN: not %mlax-opt --mlax-lower-to-linalg --split-input-file %s 2>&1 | FileCheck %s

// An op without a lowering fails the pass with an error at the op, naming it.
// CHECK: errors.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: mlax-lower-to-linalg: no lowering for mlax.dot_general yet
// CHECK-NOT: Traceback
func.func @test_unsupported_op(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = "mlax.dot_general"(%x, %x) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = f32} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
