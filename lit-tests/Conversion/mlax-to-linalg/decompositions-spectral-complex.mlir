// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null
// RUN: %mlax-run %s --entry test_eigh_complex --backend cpu --input '[[2, 1], [1, 2]]' | FileCheck %s --check-prefix=EIGH
// RUN: %mlax-run %s --entry test_svd_complex --backend cpu --input '[[3, 0, 0], [0, 0, 4]]' | FileCheck %s --check-prefix=SVD
// RUN: %mlax-run %s --entry test_qr_complex --backend cpu --input '[[3, 0], [4, 0], [0, 2]]' | FileCheck %s --check-prefix=QR

// Complex qr, eigh and svd call LAPACKE's c/z routines with the real ones' signatures: ?geqrf,
// then ?ungqr (not ?orgqr), ?heevd (not ?syevd) and ?gesdd. Eigenvalues and singular values
// are real, so their buffers have the parts' type (f32, f64) while the matrices are complex.
// CHECK-DAG:   func.func private @mlax_cgeqrf(i32, i32, i32, !llvm.ptr, i32, !llvm.ptr) -> i32
// CHECK-DAG:   func.func private @mlax_cungqr(i32, i32, i32, i32, !llvm.ptr, i32, !llvm.ptr) -> i32
// CHECK-DAG:   func.func private @mlax_zheevd(i32, i8, i8, i32, !llvm.ptr, i32, !llvm.ptr) -> i32
// CHECK-DAG:   func.func private @mlax_cgesdd(i32, i8, i32, i32, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i32) -> i32

// CHECK-LABEL: func.func @test_qr_complex
// CHECK:         memref.alloc() : memref<1x2xcomplex<f32>>
// CHECK:         call @mlax_cgeqrf(%c101_i32, %c3_i32, %c2_i32
// CHECK:         memref.alloc() : memref<1x3x3xcomplex<f32>>
// CHECK:         call @mlax_cungqr(%c101_i32{{.*}}, %c3_i32{{.*}}, %c3_i32{{.*}}, %c2_i32
// QR: result[1]: tensor<3x2xcomplex<f32>> = {{\[\[}}(-5.0, 0.0), (0.0, 0.0)], [(0.0, 0.0), (-2.0, 0.0)], [(0.0, 0.0), (0.0, 0.0)]]
func.func @test_qr_complex(%a: tensor<3x2xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3x2xcomplex<f32>>) {
  %0:2 = "mlax.qr"(%a) {full_matrices = true, pivoting = false} : (tensor<3x2xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3x2xcomplex<f32>>)
  return %0#0, %0#1 : tensor<3x3xcomplex<f32>>, tensor<3x2xcomplex<f32>>
}

// CHECK-LABEL: func.func @test_eigh_complex
// CHECK:         %[[W:.*]] = memref.alloc() : memref<1x2xf64>
// CHECK:         call @mlax_zheevd(%c101_i32, %c86_i8, %c76_i8, %c2_i32
// EIGH: result[1]: tensor<2xf64> = [1.0, 3.0]
func.func @test_eigh_complex(%a: tensor<2x2xcomplex<f64>>) -> (tensor<2x2xcomplex<f64>>, tensor<2xf64>) {
  %0:2 = "mlax.eigh"(%a) {lower = true, sort_eigenvalues = true} : (tensor<2x2xcomplex<f64>>) -> (tensor<2x2xcomplex<f64>>, tensor<2xf64>)
  return %0#0, %0#1 : tensor<2x2xcomplex<f64>>, tensor<2xf64>
}

// CHECK-LABEL: func.func @test_svd_complex
// CHECK:         memref.alloc() : memref<1x2xf32>
// CHECK:         call @mlax_cgesdd(%c101_i32, %c83_i8, %c2_i32, %c3_i32
// SVD: result[0]: tensor<2xf32> = [4.0, 3.0]
func.func @test_svd_complex(%a: tensor<2x3xcomplex<f32>>) -> (tensor<2xf32>, tensor<2x2xcomplex<f32>>, tensor<2x3xcomplex<f32>>) {
  %0:3 = "mlax.svd"(%a) {compute_uv = true, full_matrices = false} : (tensor<2x3xcomplex<f32>>) -> (tensor<2xf32>, tensor<2x2xcomplex<f32>>, tensor<2x3xcomplex<f32>>)
  return %0#0, %0#1, %0#2 : tensor<2xf32>, tensor<2x2xcomplex<f32>>, tensor<2x3xcomplex<f32>>
}
