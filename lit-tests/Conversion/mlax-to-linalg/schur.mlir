// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null
// RUN: %mlax-run %s --entry test_schur_real --backend cpu --input '[[4, 1], [2, 3]]' | FileCheck %s --check-prefix=REAL
// RUN: %mlax-run %s --entry test_schur_real --backend interpreter --input '[[4, 1], [2, 3]]' | FileCheck %s --check-prefix=REAL
// RUN: %mlax-run %s --entry test_schur_complex --backend cpu --input '[[[1, 2], [-3, 1]]]' | FileCheck %s --check-prefix=CPLX
// RUN: %mlax-run %s --entry test_schur_complex --backend interpreter --input '[[[1, 2], [-3, 1]]]' | FileCheck %s --check-prefix=CPLX

// schur calls LAPACKE ?gees row-major (101) on a copy of each matrix: jobvs 'V' (86) or 'N'
// (78), sort 'N' with a null select function, scratch buffers for sdim and the eigenvalues
// (wr and wi for a real matrix, w for a complex one), ldvs n even without vectors.
// CHECK-DAG:   func.func private @mlax_sgees(i32, i8, i8, !llvm.ptr, i32, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32) -> i32
// CHECK-DAG:   func.func private @mlax_cgees(i32, i8, i8, !llvm.ptr, i32, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32) -> i32

// T and Z, each NaN where info != 0 (one linalg.generic per result).
// CHECK-LABEL: func.func @test_schur_real
// CHECK:         bufferization.materialize_in_destination
// CHECK:         %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         call @mlax_sgees(%c101_i32, %c86_i8, %c78_i8, %[[NULL]], %c2_i32{{.*}})
// CHECK:         linalg.generic
// CHECK:           arith.cmpi ne
// CHECK:           arith.select
// CHECK:         linalg.generic
// CHECK:           arith.select
// REAL: result[0]: tensor<2x2xf32> = {{\[\[}}5.0, -1.0], [0.0, 1.9999999]]
// REAL: result[1]: tensor<2x2xf32> = {{\[\[}}0.70710677, -0.70710677], [0.70710677, 0.70710677]]
func.func @test_schur_real(%a: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %0:2 = "mlax.schur"(%a) {compute_schur_vectors = true} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x2xf32>
}

// A complex matrix without Schur vectors: cgees with jobvs 'N', T alone (upper triangular).
// CHECK-LABEL: func.func @test_schur_complex
// CHECK:         call @mlax_cgees(%c101_i32, %c78_i8, %c78_i8{{.*}})
// CHECK-COUNT-1: linalg.generic
// CHECK:         return
// CPLX: result[0]: tensor<1x2x2xcomplex<f32>> = {{\[\[\[}}(1.0000002, 2.44949), (-0.9035083, 0.4285717)], [(0.0, 0.0), (1.0, -2.4494896)]]]
func.func @test_schur_complex(%a: tensor<1x2x2xcomplex<f32>>) -> tensor<1x2x2xcomplex<f32>> {
  %0 = "mlax.schur"(%a) {compute_schur_vectors = false} : (tensor<1x2x2xcomplex<f32>>) -> tensor<1x2x2xcomplex<f32>>
  return %0 : tensor<1x2x2xcomplex<f32>>
}
