// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null
// RUN: %mlax-run %s --entry test_cholesky_2x2 --backend cpu --input '[[4, 2], [2, 5]]' | FileCheck %s --check-prefix=NUM
// RUN: %mlax-run %s --entry test_cholesky_2x2 --backend cpu --input '[[-4, 2], [2, 5]]' | FileCheck %s --check-prefix=NAN
// RUN: %mlax-run %s --entry test_lu_3x3 --backend cpu --input '[[1, 2, 0], [4, 1, 1], [2, 8, 2]]' | FileCheck %s --check-prefix=LU

// The decompositions call LAPACK (?potrf, ?getrf through LAPACKE) and CBLAS (?trsm) on a copy
// of their operands (materialize_in_destination into a fresh buffer), one call per matrix of
// the flattened batch, declared with the C interfaces' LP64 signatures.
// CHECK-DAG:   func.func private @mlax_spotrf(i32, i8, i32, !llvm.ptr, i32) -> i32
// CHECK-DAG:   func.func private @mlax_dtrsm(i32, i32, i32, i32, i32, i32, i32, f64, !llvm.ptr, i32, !llvm.ptr, i32)
// CHECK-DAG:   func.func private @mlax_sgetrf(i32, i32, i32, !llvm.ptr, i32, !llvm.ptr) -> i32

// cholesky: column-major potrf ('U' = 85) of the row-major matrix is the lower factor; the
// info of each matrix is stored, then one generic makes a failed matrix NaN and zeroes the
// upper triangle.
// CHECK-LABEL: func.func @test_cholesky
// CHECK:         %[[INFO:.*]] = memref.alloc() : memref<2xi32>
// CHECK:         %[[BUF:.*]] = memref.alloc() : memref<2x3x3xf32>
// CHECK:         bufferization.materialize_in_destination %arg0 in restrict writable %[[BUF]]
// CHECK:         scf.for %[[I:.*]] = %c0 to %c2 step %c1 {
// CHECK:           %[[S:.*]] = func.call @mlax_spotrf(%c102_i32, %c85_i8, %c3_i32, %{{.*}}, %{{.*}}) : (i32, i8, i32, !llvm.ptr, i32) -> i32
// CHECK:           memref.store %[[S]], %[[INFO]][%[[I]]] : memref<2xi32>
// CHECK:         %[[F:.*]] = bufferization.to_tensor %[[BUF]] restrict writable
// CHECK:         %[[OK:.*]] = bufferization.to_tensor %[[INFO]] restrict writable
// CHECK:         linalg.generic {{.*}} ins(%[[F]], %[[OK]] : tensor<2x3x3xf32>, tensor<2xi32>)
// CHECK:           arith.cmpi ugt
// CHECK:           arith.cmpi ne
func.func @test_cholesky(%a: tensor<2x3x3xf32>) -> tensor<2x3x3xf32> {
  %0 = "mlax.cholesky"(%a) : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  return %0 : tensor<2x3x3xf32>
}

// NUM: result[0]: tensor<2x2xf32> = {{\[\[}}2.0, 0.0], [1.0, 2.0]]
// NAN: result[0]: tensor<2x2xf32> = {{\[\[}}nan, 0.0], [nan, nan]]
func.func @test_cholesky_2x2(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = "mlax.cholesky"(%a) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// triangular_solve: cblas_dtrsm row-major (101), left (141), lower (122), transposed (112),
// non-unit (131), M = 3, N = 2, alpha = 1, on copies of a and b.
// CHECK-LABEL: func.func @test_triangular_solve
// CHECK:         bufferization.materialize_in_destination
// CHECK:         bufferization.materialize_in_destination
// CHECK:         call @mlax_dtrsm(%c101_i32, %c141_i32, %c122_i32, %c112_i32, %c131_i32, %c3_i32, %c2_i32, %cst, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK:         tensor.collapse_shape {{.*}} into tensor<3x2xf64>
func.func @test_triangular_solve(%a: tensor<3x3xf64>, %b: tensor<3x2xf64>) -> tensor<3x2xf64> {
  %0 = "mlax.triangular_solve"(%a, %b) {conjugate_a = false, left_side = true, lower = true, transpose_a = true, unit_diagonal = false} : (tensor<3x3xf64>, tensor<3x2xf64>) -> tensor<3x2xf64>
  return %0 : tensor<3x2xf64>
}

// lu: LAPACKE sgetrf row-major (101) writes 1-based pivots; the permutation is those swaps
// applied to an iota in scf loops; the pivots become 0-based.
// CHECK-LABEL: func.func @test_lu
// CHECK:         call @mlax_sgetrf(%c101_i32, %c4_i32, %c3_i32, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK:         scf.for
// CHECK:           memref.load
// CHECK:           arith.subi
// CHECK:         linalg.generic
// CHECK:           arith.cmpi slt
// CHECK:         linalg.generic
// CHECK:           arith.subi
func.func @test_lu(%a: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xi32>, tensor<4xi32>) {
  %0:3 = "mlax.lu"(%a) : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xi32>, tensor<4xi32>)
  return %0#0, %0#1, %0#2 : tensor<4x3xf32>, tensor<3xi32>, tensor<4xi32>
}

// LU: result[0]: tensor<3x3xf32> = {{\[\[}}4.0, 1.0, 1.0], [0.5, 7.5, 1.5], [0.25, 0.23333{{[0-9]*}}, -0.6]]
// LU: result[1]: tensor<3xi32> = [1, 2, 2]
// LU: result[2]: tensor<3xi32> = [1, 2, 0]
func.func @test_lu_3x3(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xi32>, tensor<3xi32>) {
  %0:3 = "mlax.lu"(%a) : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xi32>, tensor<3xi32>)
  return %0#0, %0#1, %0#2 : tensor<3x3xf32>, tensor<3xi32>, tensor<3xi32>
}
