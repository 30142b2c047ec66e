// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null
// RUN: %mlax-run %s --entry test_eigh_2x2 --backend cpu --input '[[2, 1], [1, 2]]' | FileCheck %s --check-prefix=EIGH
// RUN: %mlax-run %s --entry test_svd_2x3 --backend cpu --input '[[3, 0, 0], [0, 0, 4]]' | FileCheck %s --check-prefix=SVD
// RUN: %mlax-run %s --entry test_qr_2x1 --backend cpu --input '[[3], [4]]' | FileCheck %s --check-prefix=QR
// RUN: %mlax-run %s --entry test_qr_pivoting_2x2 --backend cpu --input '[[1, 3], [0, 4]]' | FileCheck %s --check-prefix=QRP

// qr, eigh and svd call LAPACKE (row-major, 101: LAPACKE transposes around the column-major
// routine and sizes the workspaces) on copies of their operands, one call per matrix.
// CHECK-DAG:   func.func private @mlax_sgeqrf(i32, i32, i32, !llvm.ptr, i32, !llvm.ptr) -> i32
// CHECK-DAG:   func.func private @mlax_sorgqr(i32, i32, i32, i32, !llvm.ptr, i32, !llvm.ptr) -> i32
// CHECK-DAG:   func.func private @mlax_dgeqp3(i32, i32, i32, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-DAG:   func.func private @mlax_dsyevd(i32, i8, i8, i32, !llvm.ptr, i32, !llvm.ptr) -> i32
// CHECK-DAG:   func.func private @mlax_sgesdd(i32, i8, i32, i32, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i32) -> i32

// qr (full, tall 5x3): geqrf (m = 5, n = 3, lda = 3) per matrix into a copy and the taus; the
// reflectors zero-padded to 5x5 go to orgqr (m = n = 5, k = 3, lda = 5) in a second copy; R is
// the upper triangle of geqrf's result.
// CHECK-LABEL: func.func @test_qr
// CHECK:         %[[TAUS:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK:         %[[A:.*]] = memref.alloc() : memref<2x5x3xf32>
// CHECK:         bufferization.materialize_in_destination %arg0 in restrict writable %[[A]]
// CHECK:         scf.for
// CHECK:           func.call @mlax_sgeqrf(%c101_i32, %c5_i32, %c3_i32, %{{.*}}, %c3_i32{{.*}}, %{{.*}})
// CHECK:         %[[PACKED:.*]] = bufferization.to_tensor %[[A]] restrict writable
// CHECK:         %[[PAD:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x5x5xf32>)
// CHECK:           tensor.extract %[[PACKED]]
// CHECK:         %[[Q:.*]] = memref.alloc() : memref<2x5x5xf32>
// CHECK:         bufferization.materialize_in_destination %[[PAD]] in restrict writable %[[Q]]
// CHECK:         scf.for
// CHECK:           func.call @mlax_sorgqr(%c101_i32, %c5_i32, %c5_i32{{.*}}, %c3_i32, %{{.*}}, %c5_i32{{.*}}, %{{.*}})
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x5x3xf32>)
// CHECK:           arith.cmpi ule
// CHECK:         %[[QT:.*]] = bufferization.to_tensor %[[Q]] restrict writable
// CHECK:         return %[[QT]], %[[R]]
func.func @test_qr(%a: tensor<2x5x3xf32>) -> (tensor<2x5x5xf32>, tensor<2x5x3xf32>) {
  %0:2 = "mlax.qr"(%a) {full_matrices = true, pivoting = false} : (tensor<2x5x3xf32>) -> (tensor<2x5x5xf32>, tensor<2x5x3xf32>)
  return %0#0, %0#1 : tensor<2x5x5xf32>, tensor<2x5x3xf32>
}

// qr with pivoting (reduced, wide 3x5): geqp3 (m = 3, n = 5, lda = 5) from zero pivots (free
// columns) into a copy, the pivots and the taus; its 1-based pivots less one are the third
// result; the leading 3x3 block of the reflectors goes to orgqr (m = n = k = 3).
// CHECK-LABEL: func.func @test_qr_pivoting
// CHECK:         %[[TAUS:.*]] = memref.alloc() : memref<2x3xf64>
// CHECK:         %[[A:.*]] = memref.alloc() : memref<2x3x5xf64>
// CHECK:         %[[ZERO:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x5xi32>)
// CHECK:           arith.constant 0 : i32
// CHECK:         %[[JPVT:.*]] = memref.alloc() : memref<2x5xi32>
// CHECK:         bufferization.materialize_in_destination %[[ZERO]] in restrict writable %[[JPVT]]
// CHECK:         scf.for
// CHECK:           func.call @mlax_dgeqp3(%c101_i32, %c3_i32, %c5_i32, %{{.*}}, %c5_i32{{.*}}, %{{.*}}, %{{.*}})
// CHECK:         %[[ONE_BASED:.*]] = bufferization.to_tensor %[[JPVT]] restrict writable
// CHECK:         %[[P:.*]] = linalg.generic {{.*}} ins(%[[ONE_BASED]] : tensor<2x5xi32>)
// CHECK:           arith.subi
// CHECK:         scf.for
// CHECK:           func.call @mlax_dorgqr(%c101_i32, %c3_i32, %c3_i32{{.*}}, %c3_i32{{.*}}, %{{.*}}, %c3_i32{{.*}}, %{{.*}})
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3x5xf64>)
// CHECK:         %[[Q:.*]] = bufferization.to_tensor
// CHECK:         return %[[Q]], %[[R]], %[[P]]
func.func @test_qr_pivoting(%a: tensor<2x3x5xf64>) -> (tensor<2x3x3xf64>, tensor<2x3x5xf64>, tensor<2x5xi32>) {
  %0:3 = "mlax.qr"(%a) {full_matrices = false, pivoting = true} : (tensor<2x3x5xf64>) -> (tensor<2x3x3xf64>, tensor<2x3x5xf64>, tensor<2x5xi32>)
  return %0#0, %0#1, %0#2 : tensor<2x3x3xf64>, tensor<2x3x5xf64>, tensor<2x5xi32>
}

// An empty matrix makes no call: Q the identity's columns, a zero R and zero pivots, as jax.
// CHECK-LABEL: func.func @test_no_call_qr_pivoting_empty
// CHECK-NOT:     call
// CHECK:         return
func.func @test_no_call_qr_pivoting_empty(%a: tensor<0x3xf32>) -> (tensor<0x0xf32>, tensor<0x3xf32>, tensor<3xi32>) {
  %0:3 = "mlax.qr"(%a) {full_matrices = true, pivoting = true} : (tensor<0x3xf32>) -> (tensor<0x0xf32>, tensor<0x3xf32>, tensor<3xi32>)
  return %0#0, %0#1, %0#2 : tensor<0x0xf32>, tensor<0x3xf32>, tensor<3xi32>
}

// eigh: dsyevd with jobz 'V' (86) and uplo 'L' (76) overwrites the copy with the eigenvectors
// and writes the eigenvalues; both are NaN where info != 0.
// CHECK-LABEL: func.func @test_eigh
// CHECK:         %[[S:.*]] = call @mlax_dsyevd(%c101_i32, %c86_i8, %c76_i8, %c4_i32, %{{.*}}, %c4_i32{{.*}}, %{{.*}})
// CHECK:         memref.store %[[S]]
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x4xf64>)
// CHECK:           arith.cmpi ne
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x4x4xf64>)
func.func @test_eigh(%a: tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xf64>) {
  %0:2 = "mlax.eigh"(%a) {lower = true, sort_eigenvalues = true} : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xf64>)
  return %0#0, %0#1 : tensor<4x4xf64>, tensor<4xf64>
}

// svd (reduced, wide 3x5): sgesdd with jobz 'S' (83), lda = 5, ldu = 3, ldvt = 5.
// CHECK-LABEL: func.func @test_svd
// CHECK:         scf.for
// CHECK:           func.call @mlax_sgesdd(%c101_i32, %c83_i8, %c3_i32, %c5_i32, %{{.*}}, %c5_i32{{.*}}, %{{.*}}, %{{.*}}, %c3_i32{{.*}}, %{{.*}}, %c5_i32{{.*}})
func.func @test_svd(%a: tensor<2x3x5xf32>) -> (tensor<2x3xf32>, tensor<2x3x3xf32>, tensor<2x3x5xf32>) {
  %0:3 = "mlax.svd"(%a) {compute_uv = true, full_matrices = false} : (tensor<2x3x5xf32>) -> (tensor<2x3xf32>, tensor<2x3x3xf32>, tensor<2x3x5xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x3xf32>, tensor<2x3x3xf32>, tensor<2x3x5xf32>
}

// Without vectors: jobz 'N' (78); u and vh are empty tensors.
// CHECK-LABEL: func.func @test_svd_2x3
// CHECK:         call @mlax_sgesdd(%c101_i32, %c78_i8
// SVD: result[0]: tensor<2xf32> = [4.0, 3.0]
func.func @test_svd_2x3(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  %0:3 = "mlax.svd"(%a) {compute_uv = false, full_matrices = false} : (tensor<2x3xf32>) -> (tensor<2xf32>, tensor<0x0xf32>, tensor<0x0xf32>)
  return %0#0 : tensor<2xf32>
}

// EIGH: result[0]: tensor<2x2xf32> = {{\[\[}}-0.70710677, 0.70710677], [0.70710677, 0.70710677]]
// EIGH: result[1]: tensor<2xf32> = [1.0, 3.0]
func.func @test_eigh_2x2(%a: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>) {
  %0:2 = "mlax.eigh"(%a) {lower = true, sort_eigenvalues = true} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2xf32>
}

// LAPACK's signs (a Householder reflector maps [3, 4] to [-5, 0]), as jax returns them.
// QR: result[0]: tensor<2x2xf32> = {{\[\[}}-0.6, -0.8], [-0.8, 0.6]]
// QR: result[1]: tensor<2x1xf32> = {{\[\[}}-5.0], [0.0]]
func.func @test_qr_2x1(%a: tensor<2x1xf32>) -> (tensor<2x2xf32>, tensor<2x1xf32>) {
  %0:2 = "mlax.qr"(%a) {full_matrices = true, pivoting = false} : (tensor<2x1xf32>) -> (tensor<2x2xf32>, tensor<2x1xf32>)
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x1xf32>
}

// The column of norm 5 comes first: A[:, [1, 0]] = Q R, R's diagonal non-increasing in magnitude.
// QRP: result[0]: tensor<2x2xf32> = {{\[\[}}-0.6, -0.8], [-0.8, 0.6]]
// QRP: result[1]: tensor<2x2xf32> = {{\[\[}}-5.0, -0.6], [0.0, -0.8]]
// QRP: result[2]: tensor<2xi32> = [1, 0]
func.func @test_qr_pivoting_2x2(%a: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xi32>) {
  %0:3 = "mlax.qr"(%a) {full_matrices = true, pivoting = true} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xi32>)
  return %0#0, %0#1, %0#2 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xi32>
}
