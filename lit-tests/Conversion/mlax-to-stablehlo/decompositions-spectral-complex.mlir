// RUN: %mlax-opt %s --allow-unregistered-dialect --mlax-lower-to-stablehlo | FileCheck %s
// RUN: %mlax-run %s --entry test_eigh_complex --backend xla --input '[[2, 1], [1, 2]]' | FileCheck %s --check-prefix=EIGH
// RUN: %mlax-run %s --entry test_svd_complex --backend xla --input '[[3, 0, 0], [0, 0, 4]]' | FileCheck %s --check-prefix=SVD
// RUN: %mlax-run %s --entry test_qr_complex --backend xla --input '[[3, 0], [4, 0], [0, 2]]' | FileCheck %s --check-prefix=QR

// Complex qr, eigh and svd are jax's CPU custom calls with the c/z prefixes: geqrf then ungqr,
// heevd, gesdd; the eigenvalues and singular values are real tensors.
// CHECK-LABEL: func.func @test_qr_complex
// CHECK-NEXT:    %[[G:.*]]:2 = "stablehlo.custom_call"(%arg0) {{.*}}call_target_name = "lapack_cgeqrf_ffi"{{.*}} -> (tensor<3x2xcomplex<f32>>, tensor<2xcomplex<f32>>)
// CHECK:         "stablehlo.custom_call"(%{{.*}}, %[[G]]#1) {{.*}}call_target_name = "lapack_cungqr_ffi"
// QR: result[1]: tensor<3x2xcomplex<f32>> = {{\[\[}}(-5.0, 0.0), (0.0, 0.0)], [(0.0, 0.0), (-2.0, 0.0)], [(0.0, 0.0), (0.0, 0.0)]]
func.func @test_qr_complex(%a: tensor<3x2xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3x2xcomplex<f32>>) {
  %0:2 = "mlax.qr"(%a) {full_matrices = true, pivoting = false} : (tensor<3x2xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3x2xcomplex<f32>>)
  return %0#0, %0#1 : tensor<3x3xcomplex<f32>>, tensor<3x2xcomplex<f32>>
}

// CHECK-LABEL: func.func @test_eigh_complex
// CHECK-NEXT:    "stablehlo.custom_call"(%arg0) {{.*}}call_target_name = "lapack_zheevd_ffi"{{.*}}mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}{{.*}} -> (tensor<2x2xcomplex<f64>>, tensor<2xf64>, tensor<i32>)
// EIGH: result[1]: tensor<2xf64> = [1.0, 3.0]
func.func @test_eigh_complex(%a: tensor<2x2xcomplex<f64>>) -> (tensor<2x2xcomplex<f64>>, tensor<2xf64>) {
  %0:2 = "mlax.eigh"(%a) {lower = true, sort_eigenvalues = true} : (tensor<2x2xcomplex<f64>>) -> (tensor<2x2xcomplex<f64>>, tensor<2xf64>)
  return %0#0, %0#1 : tensor<2x2xcomplex<f64>>, tensor<2xf64>
}

// CHECK-LABEL: func.func @test_svd_complex
// CHECK:         "stablehlo.custom_call"(%{{.*}}) {{.*}}call_target_name = "lapack_cgesdd_ffi"{{.*}} -> (tensor<2x3xcomplex<f32>>, tensor<2xf32>, tensor<2x2xcomplex<f32>>, tensor<2x3xcomplex<f32>>, tensor<i32>)
// SVD: result[0]: tensor<2xf32> = [4.0, 3.0]
func.func @test_svd_complex(%a: tensor<2x3xcomplex<f32>>) -> (tensor<2xf32>, tensor<2x2xcomplex<f32>>, tensor<2x3xcomplex<f32>>) {
  %0:3 = "mlax.svd"(%a) {compute_uv = true, full_matrices = false} : (tensor<2x3xcomplex<f32>>) -> (tensor<2xf32>, tensor<2x2xcomplex<f32>>, tensor<2x3xcomplex<f32>>)
  return %0#0, %0#1, %0#2 : tensor<2xf32>, tensor<2x2xcomplex<f32>>, tensor<2x3xcomplex<f32>>
}
