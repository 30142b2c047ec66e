// RUN: not %mlax-opt --mlax-lower-to-linalg %s 2>&1 | FileCheck %s

// Unsigned element types are rejected for now: arith works on signless integers and the
// pass does not rewrite function signatures.
// CHECK: unsigned.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: mlax-lower-to-linalg: mlax.add on unsigned type ui32 is not supported yet
func.func @test_unsigned(%x: tensor<2xui32>) -> tensor<2xui32> {
  %0 = "mlax.add"(%x, %x) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
  return %0 : tensor<2xui32>
}
