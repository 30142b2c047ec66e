// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s --check-prefix=RELEASE
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null
// RUN: %mlax-run %s --entry test_fft --backend cpu --precision 5 --input '[[1, 2j, 0, -1], [0.5, 0.5, 0.5, 0.5]]' | FileCheck %s --check-prefix=FFT
// RUN: %mlax-run %s --entry test_irfft2 --backend cpu --precision 5 --input '[[1+1j, 2], [0.5j, -1]]' | FileCheck %s --check-prefix=IRFFT

// fft calls MKL's DFTI through variadic llvm.func declarations (llvm.call ... vararg sets the
// x86-64 vector-register count a variadic callee reads). Each call site keeps its descriptor in
// a global: the first execution creates it (single precision 35, complex domain 32, rank 1,
// length 4), makes it not in place (placement 11 = 44), one transform per batch row (number of
// transforms 7, distances 14/15), on one thread (thread limit 27 = 1: under 2^17 points waking
// MKL's OpenMP team costs more than the transform), commits it and publishes it with a compare-and-swap (a thread
// that lost the race frees its own; a descriptor MKL refused is freed and the global stays
// null); every execution then runs it forward from the operand's buffer into a fresh one, which
// is NaN when a step failed. The operand's buffer is taken in an alloca scope with the call. @mlax_release_state frees the module's descriptors (the runtime
// calls it when it unlinks the code).
// CHECK-DAG:   llvm.func @mlax_dfti_create(!llvm.ptr, i32, i32, i64, ...) -> i64
// CHECK-DAG:   llvm.func @mlax_dfti_set(!llvm.ptr, i32, ...) -> i64
// CHECK-DAG:   llvm.func @mlax_dfti_forward(!llvm.ptr, !llvm.ptr, ...) -> i64
// CHECK-DAG:   llvm.mlir.global internal @mlax_dfti_plan_0() {{.*}} : !llvm.ptr
// CHECK-DAG:   llvm.func internal @mlax_publish_descriptor(%[[SLOT:.*]]: !llvm.ptr, %[[MADE:.*]]: !llvm.ptr) -> !llvm.ptr attributes {no_inline}
// CHECK-DAG:     llvm.cmpxchg %[[SLOT]], %{{.*}}, %[[MADE]] acq_rel acquire
// RELEASE-LABEL: llvm.func @mlax_release_state()
// RELEASE:         %[[PLAN:.*]] = llvm.mlir.addressof @mlax_dfti_plan_0
// RELEASE:         llvm.cond_br
// RELEASE:         llvm.call @mlax_dfti_free(%[[PLAN]])
// RELEASE:         llvm.mlir.addressof @mlax_dfti_plan_1
// RELEASE:         llvm.mlir.addressof @mlax_dfti_plan_2
// RELEASE:         llvm.mlir.addressof @mlax_dfti_plan_3
// RELEASE:         llvm.return
// CHECK-LABEL: func.func @test_fft
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<2x4xcomplex<f32>>
// CHECK:         %[[GLOBAL:.*]] = llvm.mlir.addressof @mlax_dfti_plan_0
// CHECK:         %[[CACHED:.*]] = llvm.load %[[GLOBAL]] atomic acquire
// CHECK:         %[[H:.*]] = scf.if %{{.*}} -> (!llvm.ptr) {
// CHECK:           %[[NEW:.*]]:2 = memref.alloca_scope {{ *}}-> (!llvm.ptr, i1) {
// CHECK:             llvm.call @mlax_dfti_create(%{{.*}}, %c35_i32, %c32_i32, %{{.*}}, %c4_i64) vararg(!llvm.func<i64 (ptr, i32, i32, i64, ...)>)
// CHECK:             llvm.call @mlax_dfti_set(%{{.*}}, %c11_i32, %c44_i64) vararg
// CHECK:             llvm.call @mlax_dfti_set(%{{.*}}, %c7_i32, %c2_i64) vararg
// CHECK:             llvm.call @mlax_dfti_set(%{{.*}}, %c27_i32, %c1_i64{{.*}}) vararg
// CHECK:             llvm.call @mlax_dfti_commit
// CHECK:           scf.if %[[NEW]]#1 -> (!llvm.ptr) {
// CHECK:             llvm.call @mlax_dfti_free
// CHECK:           } else {
// CHECK:             %[[KEPT:.*]] = llvm.call @mlax_publish_descriptor(%[[GLOBAL]], %[[NEW]]#0)
// CHECK:             llvm.icmp "ne" %[[KEPT]], %[[NEW]]#0
// CHECK:             llvm.call @mlax_dfti_free
// CHECK:         } else {
// CHECK:           scf.yield %[[CACHED]]
// CHECK:         %[[STATUS:.*]] = scf.if %{{.*}} -> (i64) {
// CHECK:           memref.alloca_scope {{ *}}-> (i64) {
// CHECK:             bufferization.to_buffer %arg0 read_only
// CHECK:             llvm.call @mlax_dfti_forward(%[[H]], %{{.*}}, %{{.*}}) vararg(!llvm.func<i64 (ptr, ptr, ...)>) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> i64
// CHECK:         %[[FAILED:.*]] = llvm.icmp "ne" %[[STATUS]]
// CHECK:         scf.if %[[FAILED]] {
// CHECK:           linalg.fill ins(%{{.*}} : complex<f32>) outs(%[[OUT]] : memref<2x4xcomplex<f32>>)
// CHECK:         bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT:     mlax_dfti_free
// CHECK:         return
func.func @test_fft(%x: tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>> {
  %0 = "mlax.fft"(%x) {fft_lengths = array<i64: 4>, fft_type = "FFT"} : (tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
  return %0 : tensor<2x4xcomplex<f32>>
}
// numpy.fft.fft of the same rows
// FFT: result[0]: tensor<2x4xcomplex<f32>> = {{\[\[}}(0, 2), (3, -1), (2, -2), (-1, 1)], [(2, 0), (0, 0), (0, 0), (0, 0)]]

// RFFT of a double-precision 3-d transform: real domain (33), conjugate-even storage
// COMPLEX_COMPLEX (10 = 39), the row-major strides of the real input (12) and of the half
// spectrum (13).
// CHECK-LABEL: func.func @test_rfft3
// CHECK:         llvm.call @mlax_dfti_create(%{{.*}}, %c36_i32, %c33_i32, %c3_i64{{.*}}, %{{.*}}) vararg
// CHECK:         llvm.call @mlax_dfti_set(%{{.*}}, %c10_i32, %c39_i64) vararg
// CHECK:         llvm.call @mlax_dfti_set(%{{.*}}, %c12_i32, %{{.*}}) vararg
// CHECK:         llvm.call @mlax_dfti_set(%{{.*}}, %c13_i32, %{{.*}}) vararg
// CHECK:         llvm.call @mlax_dfti_forward
func.func @test_rfft3(%x: tensor<3x4x5xf64>) -> tensor<3x4x3xcomplex<f64>> {
  %0 = "mlax.fft"(%x) {fft_lengths = array<i64: 3, 4, 5>, fft_type = "RFFT"} : (tensor<3x4x5xf64>) -> tensor<3x4x3xcomplex<f64>>
  return %0 : tensor<3x4x3xcomplex<f64>>
}

// IRFFT over two axes: numpy's (only the last axis conjugate-even): an in-place complex inverse
// of the leading axis on a copy (backward scale 1/2 (5 = 0.5), strided by the 2 frequencies),
// then the one-dimensional complex-to-real inverse of the last (scale 1/3), both backward.
// CHECK-LABEL: func.func @test_irfft2
// CHECK:         bufferization.materialize_in_destination %expanded
// CHECK:         llvm.mlir.addressof @mlax_dfti_plan_2
// CHECK:         %[[H:.*]] = scf.if
// CHECK:           llvm.call @mlax_dfti_create(%{{.*}}, %c35_i32, %c32_i32, %{{.*}}, %c2_i64) vararg
// CHECK:           llvm.call @mlax_dfti_set(%{{.*}}, %c5_i32, %cst) vararg(!llvm.func<i64 (ptr, i32, ...)>) : (!llvm.ptr, i32, f64) -> i64
// CHECK:         llvm.call @mlax_dfti_backward(%[[H]], %{{.*}}) vararg
// CHECK:         llvm.mlir.addressof @mlax_dfti_plan_3
// CHECK:         llvm.call @mlax_dfti_create(%{{.*}}, %c35_i32, %c33_i32, %{{.*}}, %c3_i64) vararg
// CHECK:         llvm.call @mlax_dfti_backward(%{{.*}}, %{{.*}}, %{{.*}}) vararg
func.func @test_irfft2(%x: tensor<2x2xcomplex<f32>>) -> tensor<2x3xf32> {
  %0 = "mlax.fft"(%x) {fft_lengths = array<i64: 2, 3>, fft_type = "IRFFT"} : (tensor<2x2xcomplex<f32>>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
// numpy.fft.irfft2([[1+1j, 2], [0.5j, -1]], s=(2, 3))
// IRFFT: result[0]: tensor<2x3xf32> = {{\[\[}}0.5, 0, 0], [1.1667, -0.33333, -0.33333]]
