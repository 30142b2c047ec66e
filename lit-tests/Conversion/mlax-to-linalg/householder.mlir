// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null
// RUN: %mlax-run %s --entry test_qr_run --backend cpu --precision 5 --input '[[3, 1], [4, 2], [0, 2]]' | FileCheck %s --check-prefix=QR
// RUN: %mlax-run %s --entry test_qr_run --backend interpreter --precision 5 --input '[[3, 1], [4, 2], [0, 2]]' | FileCheck %s --check-prefix=QR
// RUN: %mlax-run %s --entry test_geqp3_run --backend cpu --precision 5 --input '[[3, 1], [4, 2], [0, 9]]' | FileCheck %s --check-prefix=QP3
// RUN: %mlax-run %s --entry test_geqp3_run --backend interpreter --precision 5 --input '[[3, 1], [4, 2], [0, 9]]' | FileCheck %s --check-prefix=QP3
// RUN: %mlax-run %s --entry test_ormqr_run --backend cpu --precision 5 --input '[[3, 1], [4, 2], [0, 2]]' | FileCheck %s --check-prefix=ORMQR
// RUN: %mlax-run %s --entry test_ormqr_run --backend interpreter --precision 5 --input '[[3, 1], [4, 2], [0, 2]]' | FileCheck %s --check-prefix=ORMQR
// RUN: %mlax-run %s --entry test_hessenberg_run --backend cpu --precision 5 --input '[[1, 2, 3], [4, 5, 6], [7, 8, 10]]' | FileCheck %s --check-prefix=HESS
// RUN: %mlax-run %s --entry test_tridiagonal_run --backend cpu --precision 5 --input '[[4, 9, 9], [1, 2, 9], [2, 3, 5]]' | FileCheck %s --check-prefix=TRI

// Each op calls its LAPACKE routine row-major (101) on a fresh copy of each matrix: geqrf,
// geqp3 (m, n, a, lda, jpvt, tau), orgqr/ungqr (m, n, k), gehrd (n, ilo 1, ihi n), sytrd/hetrd (uplo 'L' 76 or 'U' 85).
// CHECK-DAG:   func.func private @mlax_sgeqrf(i32, i32, i32, !llvm.ptr, i32, !llvm.ptr) -> i32
// CHECK-DAG:   func.func private @mlax_sgeqp3(i32, i32, i32, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-DAG:   func.func private @mlax_sorgqr(i32, i32, i32, i32, !llvm.ptr, i32, !llvm.ptr) -> i32
// CHECK-DAG:   func.func private @mlax_zungqr(i32, i32, i32, i32, !llvm.ptr, i32, !llvm.ptr) -> i32
// CHECK-DAG:   func.func private @mlax_sormqr(i32, i8, i8, i32, i32, i32, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, i32) -> i32
// CHECK-DAG:   func.func private @mlax_zunmqr(i32, i8, i8, i32, i32, i32, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, i32) -> i32
// CHECK-DAG:   func.func private @mlax_sgehrd(i32, i32, i32, i32, !llvm.ptr, i32, !llvm.ptr) -> i32
// CHECK-DAG:   func.func private @mlax_ssytrd(i32, i8, i32, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-DAG:   func.func private @mlax_chetrd(i32, i8, i32, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32

// geqrf then the product of its reflectors: the reduced Q of a 3x2 matrix. Neither checks info
// (jaxlib's kernels report none for them).
// CHECK-LABEL: func.func @test_qr_run
// CHECK:         call @mlax_sgeqrf(%c101_i32, %c3_i32, %c2_i32, %{{.*}}, %c2_i32{{.*}}, %{{.*}})
// CHECK:         bufferization.materialize_in_destination
// CHECK:         call @mlax_sorgqr(%c101_i32{{.*}}, %c3_i32{{.*}}, %c2_i32{{.*}}, %c2_i32{{.*}}, %{{.*}}, %c2_i32{{.*}}, %{{.*}})
// CHECK-NOT:     linalg.generic
// CHECK:         return
// QR: result[0]: tensor<3x2xf32> = {{\[\[}}-0.6, 0.15689], [-0.8, -0.11767], [-0, -0.98058]]
func.func @test_qr_run(%a: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0:2 = "mlax.geqrf"(%a) : (tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<2xf32>)
  %1 = "mlax.householder_product"(%0#0, %0#1) : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// geqp3: the pivots are copied too (nonzero entries fix columns) and come back 1-based.
// CHECK-LABEL: func.func @test_geqp3_run
// CHECK-COUNT-2: bufferization.materialize_in_destination
// CHECK:         call @mlax_sgeqp3(%c101_i32, %c3_i32, %c2_i32, %{{.*}}, %c2_i32{{.*}}, %{{.*}}, %{{.*}})
// QP3: result[0]: tensor<3x2xf32> = {{\[\[}}-9.2736, -1.1862], [0.19467, -4.8573], [0.87603, -0.45599]]
// QP3: result[1]: tensor<2xi32> = [2, 1]
// QP3: result[2]: tensor<2xf32> = [1.1078, 1.6557]
func.func @test_geqp3_run(%a: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<2xi32>, tensor<2xf32>) {
  %p = "mlax.constant"() {value = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %0:3 = "mlax.geqp3"(%a, %p) : (tensor<3x2xf32>, tensor<2xi32>) -> (tensor<3x2xf32>, tensor<2xi32>, tensor<2xf32>)
  return %0#0, %0#1, %0#2 : tensor<3x2xf32>, tensor<2xi32>, tensor<2xf32>
}

// A batch of complex reflectors: one call per matrix in an scf.for, the taus copied too.
// CHECK-LABEL: func.func @test_householder_product_batch
// CHECK:         scf.for
// CHECK:           func.call @mlax_zungqr(%c101_i32{{.*}}, %c3_i32, %c2_i32, %c1_i32, %{{.*}}, %c2_i32{{.*}}, %{{.*}})
func.func @test_householder_product_batch(%a: tensor<2x3x2xcomplex<f64>>, %t: tensor<2x1xcomplex<f64>>) -> tensor<2x3x2xcomplex<f64>> {
  %0 = "mlax.householder_product"(%a, %t) : (tensor<2x3x2xcomplex<f64>>, tensor<2x1xcomplex<f64>>) -> tensor<2x3x2xcomplex<f64>>
  return %0 : tensor<2x3x2xcomplex<f64>>
}

// ormqr: Q^T a from a's own reflectors is R above zeros. Side 'L' (76), trans 'T' (84); c's shape
// (3 x 2), k = 2, a's leading dimension its column count (row-major), ldc c's.
// CHECK-LABEL: func.func @test_ormqr_run
// CHECK:         call @mlax_sgeqrf
// CHECK-DAG:     %[[L:.*]] = arith.constant 76 : i8
// CHECK-DAG:     %[[T:.*]] = arith.constant 84 : i8
// CHECK:         call @mlax_sormqr(%c101_i32{{.*}}, %[[L]], %[[T]], %c3_i32{{.*}}, %c2_i32{{.*}}, %c2_i32{{.*}}, %{{.*}}, %c2_i32{{.*}}, %{{.*}}, %{{.*}}, %c2_i32{{.*}})
// ORMQR: result[0]: tensor<3x2xf32> = {{\[\[}}-5, -2.2], [0, -2.0396], [0, {{.*}}]]
func.func @test_ormqr_run(%a: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0:2 = "mlax.geqrf"(%a) : (tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<2xf32>)
  %1 = "mlax.ormqr"(%0#0, %0#1, %a) {left = true, transpose = true} : (tensor<3x2xf32>, tensor<2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// c Q for a batch of complex reflectors: side 'R' (82), trans 'N' (78), c 4 x 3, one reflector,
// a's leading dimension 2, one call per matrix.
// CHECK-LABEL: func.func @test_ormqr_right_batch
// CHECK-DAG:     %[[R:.*]] = arith.constant 82 : i8
// CHECK-DAG:     %[[N:.*]] = arith.constant 78 : i8
// CHECK:         scf.for
// CHECK:           func.call @mlax_zunmqr(%c101_i32{{.*}}, %[[R]], %[[N]], %c4_i32{{.*}}, %c3_i32{{.*}}, %c1_i32{{.*}}, %{{.*}}, %c2_i32{{.*}}, %{{.*}}, %{{.*}}, %c3_i32{{.*}})
func.func @test_ormqr_right_batch(%a: tensor<2x3x2xcomplex<f64>>, %t: tensor<2x1xcomplex<f64>>, %c: tensor<2x4x3xcomplex<f64>>) -> tensor<2x4x3xcomplex<f64>> {
  %0 = "mlax.ormqr"(%a, %t, %c) {left = false, transpose = false} : (tensor<2x3x2xcomplex<f64>>, tensor<2x1xcomplex<f64>>, tensor<2x4x3xcomplex<f64>>) -> tensor<2x4x3xcomplex<f64>>
  return %0 : tensor<2x4x3xcomplex<f64>>
}

// ormqr with no reflectors is c itself: no call.
// CHECK-LABEL: func.func @test_no_ormqr_call_without_reflectors
// CHECK-NOT:     call @mlax_sormqr
// CHECK:         return %arg2
func.func @test_no_ormqr_call_without_reflectors(%a: tensor<3x2xf32>, %t: tensor<0xf32>, %c: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = "mlax.ormqr"(%a, %t, %c) {left = true, transpose = false} : (tensor<3x2xf32>, tensor<0xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// hessenberg: gehrd with ilo 1, ihi n; both results NaN where info != 0.
// CHECK-LABEL: func.func @test_hessenberg_run
// CHECK:         %[[S:.*]] = call @mlax_sgehrd(%c101_i32, %c3_i32, %c1_i32, %c3_i32{{.*}})
// CHECK:         memref.store %[[S]]
// CHECK:         linalg.generic
// CHECK:           arith.cmpi ne
// CHECK:         linalg.generic
// HESS: result[0]: tensor<3x3xf32> = {{\[\[}}1, -3.597, -0.24807], [-8.0623, 14.8, 2.4], [0.58032, 0.4, 0.2]]
// HESS: result[1]: tensor<2xf32> = [1.4961, 0]
func.func @test_hessenberg_run(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<2xf32>) {
  %0:2 = "mlax.hessenberg"(%a) : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<3x3xf32>, tensor<2xf32>
}

// tridiagonal of a real matrix from its lower triangle ('L', 76): the upper one is not read.
// CHECK-LABEL: func.func @test_tridiagonal_run
// CHECK:         %[[L:.*]] = arith.constant 76 : i8
// CHECK:         call @mlax_ssytrd(%c101_i32, %[[L]], %c3_i32{{.*}})
// TRI: result[0]: tensor<3x3xf32> = {{\[\[}}4, 9, 9], [-2.2361, 6.8, 9], [0.61803, 0.6, 0.2]]
// TRI: result[1]: tensor<3xf32> = [4, 6.8, 0.2]
// TRI: result[2]: tensor<2xf32> = [-2.2361, 0.6]
// TRI: result[3]: tensor<2xf32> = [1.4472, 0]
func.func @test_tridiagonal_run(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32>) {
  %0:4 = "mlax.tridiagonal"(%a) {lower = true} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<3x3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32>
}

// A Hermitian one calls hetrd (upper: 'U', 85); d and e are real buffers.
// CHECK-LABEL: func.func @test_tridiagonal_complex
// CHECK:         memref.alloc() : memref<1x3xf32>
// CHECK:         memref.alloc() : memref<1x2xf32>
// CHECK:         memref.alloc() : memref<1x2xcomplex<f32>>
// CHECK:         %[[U:.*]] = arith.constant 85 : i8
// CHECK:         call @mlax_chetrd(%c101_i32, %[[U]], %c3_i32{{.*}})
func.func @test_tridiagonal_complex(%a: tensor<3x3xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3xf32>, tensor<2xf32>, tensor<2xcomplex<f32>>) {
  %0:4 = "mlax.tridiagonal"(%a) {lower = false} : (tensor<3x3xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3xf32>, tensor<2xf32>, tensor<2xcomplex<f32>>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<3x3xcomplex<f32>>, tensor<3xf32>, tensor<2xf32>, tensor<2xcomplex<f32>>
}

// Empty matrices make no call.
// CHECK-LABEL: func.func @test_no_call_when_empty
// CHECK-NOT:     call @mlax_sgeqrf
// CHECK:         return
func.func @test_no_call_when_empty(%a: tensor<0x3xf32>) -> (tensor<0x3xf32>, tensor<0xf32>) {
  %0:2 = "mlax.geqrf"(%a) : (tensor<0x3xf32>) -> (tensor<0x3xf32>, tensor<0xf32>)
  return %0#0, %0#1 : tensor<0x3xf32>, tensor<0xf32>
}
