// RUN: %mlax-opt %s --allow-unregistered-dialect --mlax-lower-to-stablehlo | FileCheck %s
// RUN: %mlax-run %s --entry test_qr_run --backend xla --precision 5 --input '[[3, 1], [4, 2], [0, 2]]' | FileCheck %s --check-prefix=QR
// RUN: %mlax-run %s --entry test_geqp3_run --backend xla --precision 5 --input '[[3, 1], [4, 2], [0, 9]]' | FileCheck %s --check-prefix=QP3
// RUN: %mlax-run %s --entry test_ormqr_run --backend xla --precision 5 --input '[[3, 1], [4, 2], [0, 2]]' | FileCheck %s --check-prefix=ORMQR
// RUN: %mlax-run %s --entry test_hessenberg_run --backend xla --precision 5 --input '[[1, 2, 3], [4, 5, 6], [7, 8, 10]]' | FileCheck %s --check-prefix=HESS
// RUN: %mlax-run %s --entry test_tridiagonal_run --backend xla --precision 5 --input '[[4, 9, 9], [1, 2, 9], [2, 3, 5]]' | FileCheck %s --check-prefix=TRI

// What jax emits on CPU: jaxlib's lapack_?geqrf_ffi, lapack_?geqp3_ffi and lapack_?orgqr_ffi (ungqr for complex)
// with no attributes and no info check; column-major matrices, row-major taus.
// CHECK-LABEL: func.func @test_qr_run
// CHECK-NEXT:    %[[G:.*]]:2 = "stablehlo.custom_call"(%arg0) {{.*}}call_target_name = "lapack_sgeqrf_ffi"{{.*}}mhlo.backend_config = {}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>]} : (tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<2xf32>)
// CHECK-NEXT:    %[[Q:.*]] = "stablehlo.custom_call"(%[[G]]#0, %[[G]]#1) {{.*}}call_target_name = "lapack_sorgqr_ffi"{{.*}}operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>]
// CHECK-NEXT:    return %[[Q]]
// QR: result[0]: tensor<3x2xf32> = {{\[\[}}-0.6, 0.15689], [-0.8, -0.11767], [-0, -0.98058]]
func.func @test_qr_run(%a: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0:2 = "mlax.geqrf"(%a) : (tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<2xf32>)
  %1 = "mlax.householder_product"(%0#0, %0#1) : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// geqp3: lapack_?geqp3_ffi on the matrix and the initial pivots, no attributes.
// CHECK-LABEL: func.func @test_geqp3_run
// CHECK:         "stablehlo.custom_call"(%arg0, %{{.*}}) {{.*}}call_target_name = "lapack_sgeqp3_ffi"{{.*}}mhlo.backend_config = {}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]} : (tensor<3x2xf32>, tensor<2xi32>) -> (tensor<3x2xf32>, tensor<2xi32>, tensor<2xf32>)
// QP3: result[0]: tensor<3x2xf32> = {{\[\[}}-9.2736, -1.1862], [0.19467, -4.8573], [0.87603, -0.45599]]
// QP3: result[1]: tensor<2xi32> = [2, 1]
// QP3: result[2]: tensor<2xf32> = [1.1078, 1.6557]
func.func @test_geqp3_run(%a: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<2xi32>, tensor<2xf32>) {
  %p = "mlax.constant"() {value = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %0:3 = "mlax.geqp3"(%a, %p) : (tensor<3x2xf32>, tensor<2xi32>) -> (tensor<3x2xf32>, tensor<2xi32>, tensor<2xf32>)
  return %0#0, %0#1, %0#2 : tensor<3x2xf32>, tensor<2xi32>, tensor<2xf32>
}

// CHECK-LABEL: func.func @test_householder_product_complex
// CHECK-NEXT:    "stablehlo.custom_call"(%arg0, %arg1) {{.*}}call_target_name = "lapack_zungqr_ffi"{{.*}}operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>]
func.func @test_householder_product_complex(%a: tensor<2x3x2xcomplex<f64>>, %t: tensor<2x1xcomplex<f64>>) -> tensor<2x3x2xcomplex<f64>> {
  %0 = "mlax.householder_product"(%a, %t) : (tensor<2x3x2xcomplex<f64>>, tensor<2x1xcomplex<f64>>) -> tensor<2x3x2xcomplex<f64>>
  return %0 : tensor<2x3x2xcomplex<f64>>
}

// ormqr: lapack_?ormqr_ffi (unmqr for complex) with jax's bool attributes left and transpose,
// c's layout for the result; no info.
// CHECK-LABEL: func.func @test_ormqr_run
// CHECK-NEXT:    %[[G:.*]]:2 = "stablehlo.custom_call"(%arg0) {{.*}}call_target_name = "lapack_sgeqrf_ffi"
// CHECK-NEXT:    %[[P:.*]] = "stablehlo.custom_call"(%[[G]]#0, %[[G]]#1, %arg0) {{.*}}call_target_name = "lapack_sormqr_ffi"{{.*}}mhlo.backend_config = {left = true, transpose = true}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}
// CHECK-NEXT:    return %[[P]]
// ORMQR: result[0]: tensor<3x2xf32> = {{\[\[}}-5, -2.2], [0, -2.0396], [0, {{.*}}]]
func.func @test_ormqr_run(%a: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0:2 = "mlax.geqrf"(%a) : (tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<2xf32>)
  %1 = "mlax.ormqr"(%0#0, %0#1, %a) {left = true, transpose = true} : (tensor<3x2xf32>, tensor<2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// CHECK-LABEL: func.func @test_ormqr_right_complex
// CHECK-NEXT:    "stablehlo.custom_call"(%arg0, %arg1, %arg2) {{.*}}call_target_name = "lapack_zunmqr_ffi"{{.*}}mhlo.backend_config = {left = false, transpose = false}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>]
func.func @test_ormqr_right_complex(%a: tensor<2x3x2xcomplex<f64>>, %t: tensor<2x1xcomplex<f64>>, %c: tensor<2x4x3xcomplex<f64>>) -> tensor<2x4x3xcomplex<f64>> {
  %0 = "mlax.ormqr"(%a, %t, %c) {left = false, transpose = false} : (tensor<2x3x2xcomplex<f64>>, tensor<2x1xcomplex<f64>>, tensor<2x4x3xcomplex<f64>>) -> tensor<2x4x3xcomplex<f64>>
  return %0 : tensor<2x4x3xcomplex<f64>>
}

// ormqr with no reflectors is c itself: no call.
// CHECK-LABEL: func.func @test_no_ormqr_call_without_reflectors
// CHECK-NOT:     stablehlo.custom_call
// CHECK:         return %arg2
func.func @test_no_ormqr_call_without_reflectors(%a: tensor<3x2xf32>, %t: tensor<0xf32>, %c: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = "mlax.ormqr"(%a, %t, %c) {left = true, transpose = false} : (tensor<3x2xf32>, tensor<0xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// hessenberg: gehrd with jax's i32 attributes low = 1, high = n; NaN where info != 0.
// CHECK-LABEL: func.func @test_hessenberg_run
// CHECK-NEXT:    %[[H:.*]]:3 = "stablehlo.custom_call"(%arg0) {{.*}}call_target_name = "lapack_sgehrd_ffi"{{.*}}mhlo.backend_config = {high = 3 : i32, low = 1 : i32}
// CHECK:         "stablehlo.compare"(%[[H]]#2, %{{.*}}) {{.*}}comparison_direction EQ
// CHECK:         "stablehlo.select"(%{{.*}}, %[[H]]#0, %{{.*}})
// CHECK:         "stablehlo.select"(%{{.*}}, %[[H]]#1, %{{.*}})
// HESS: result[0]: tensor<3x3xf32> = {{\[\[}}1, -3.597, -0.24807], [-8.0623, 14.8, 2.4], [0.58032, 0.4, 0.2]]
// HESS: result[1]: tensor<2xf32> = [1.4961, 0]
func.func @test_hessenberg_run(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<2xf32>) {
  %0:2 = "mlax.hessenberg"(%a) : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<3x3xf32>, tensor<2xf32>
}

// tridiagonal: sytrd (hetrd for complex) with uplo 'L' (76) or 'U' (85); four results and info.
// CHECK-LABEL: func.func @test_tridiagonal_run
// CHECK-NEXT:    %[[T:.*]]:5 = "stablehlo.custom_call"(%arg0) {{.*}}call_target_name = "lapack_ssytrd_ffi"{{.*}}mhlo.backend_config = {uplo = 76 : ui8}
// CHECK-COUNT-4: "stablehlo.select"
// TRI: result[0]: tensor<3x3xf32> = {{\[\[}}4, 9, 9], [-2.2361, 6.8, 9], [0.61803, 0.6, 0.2]]
// TRI: result[1]: tensor<3xf32> = [4, 6.8, 0.2]
// TRI: result[2]: tensor<2xf32> = [-2.2361, 0.6]
// TRI: result[3]: tensor<2xf32> = [1.4472, 0]
func.func @test_tridiagonal_run(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32>) {
  %0:4 = "mlax.tridiagonal"(%a) {lower = true} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<3x3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32>
}

// CHECK-LABEL: func.func @test_tridiagonal_complex
// CHECK-NEXT:    "stablehlo.custom_call"(%arg0) {{.*}}call_target_name = "lapack_chetrd_ffi"{{.*}}mhlo.backend_config = {uplo = 85 : ui8}{{.*}} -> (tensor<3x3xcomplex<f32>>, tensor<3xf32>, tensor<2xf32>, tensor<2xcomplex<f32>>, tensor<i32>)
func.func @test_tridiagonal_complex(%a: tensor<3x3xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3xf32>, tensor<2xf32>, tensor<2xcomplex<f32>>) {
  %0:4 = "mlax.tridiagonal"(%a) {lower = false} : (tensor<3x3xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3xf32>, tensor<2xf32>, tensor<2xcomplex<f32>>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<3x3xcomplex<f32>>, tensor<3xf32>, tensor<2xf32>, tensor<2xcomplex<f32>>
}

// Empty matrices make no call: geqrf's taus are zeros.
// CHECK-LABEL: func.func @test_no_call_when_empty
// CHECK-NOT:     stablehlo.custom_call
// CHECK:         return
func.func @test_no_call_when_empty(%a: tensor<0x3xf32>) -> (tensor<0x3xf32>, tensor<0xf32>) {
  %0:2 = "mlax.geqrf"(%a) : (tensor<0x3xf32>) -> (tensor<0x3xf32>, tensor<0xf32>)
  return %0#0, %0#1 : tensor<0x3xf32>, tensor<0xf32>
}
