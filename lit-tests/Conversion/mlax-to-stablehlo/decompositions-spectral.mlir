// RUN: %mlax-opt %s --allow-unregistered-dialect --mlax-lower-to-stablehlo | FileCheck %s
// RUN: %mlax-run %s --entry test_eigh_2x2 --backend xla --input '[[2, 1], [1, 2]]' | FileCheck %s --check-prefix=EIGH
// RUN: %mlax-run %s --entry test_svd_2x3 --backend xla --input '[[3, 0, 0], [0, 0, 4]]' | FileCheck %s --check-prefix=SVD
// RUN: %mlax-run %s --entry test_qr_2x1 --backend xla --input '[[3], [4]]' | FileCheck %s --check-prefix=QR
// RUN: %mlax-run %s --entry test_qr_pivoting_2x2 --backend xla --input '[[1, 3], [0, 4]]' | FileCheck %s --check-prefix=QRP

// qr, eigh and svd are what jax emits on CPU: custom calls of jaxlib's LAPACK targets, the
// matrices column-major (minor-to-major [1, 2, 0]), the vectors row-major.
// qr (full, tall): geqrf, its result zero-padded to 5x5 for orgqr (the taus a row-major
// operand), R the upper triangle (zero where row > column).
// CHECK-LABEL: func.func @test_qr
// CHECK-NEXT:    %[[G:.*]]:2 = "stablehlo.custom_call"(%arg0) {{.*}}call_target_name = "lapack_sgeqrf_ffi"{{.*}}result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x5x3xf32>) -> (tensor<2x5x3xf32>, tensor<2x3xf32>)
// CHECK:         %[[P:.*]] = "stablehlo.pad"(%[[G]]#0, %{{.*}}) {edge_padding_high = array<i64: 0, 0, 2>
// CHECK-NEXT:    %[[Q:.*]] = "stablehlo.custom_call"(%[[P]], %[[G]]#1) {{.*}}call_target_name = "lapack_sorgqr_ffi"{{.*}}operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>]
// CHECK:         "stablehlo.compare"(%{{.*}}, %{{.*}}) {{.*}}comparison_direction GT
// CHECK:         %[[R:.*]] = "stablehlo.select"(%{{.*}}, %{{.*}}, %[[G]]#0)
// CHECK-NEXT:    return %[[Q]], %[[R]]
func.func @test_qr(%a: tensor<2x5x3xf32>) -> (tensor<2x5x5xf32>, tensor<2x5x3xf32>) {
  %0:2 = "mlax.qr"(%a) {full_matrices = true, pivoting = false} : (tensor<2x5x3xf32>) -> (tensor<2x5x5xf32>, tensor<2x5x3xf32>)
  return %0#0, %0#1 : tensor<2x5x5xf32>, tensor<2x5x3xf32>
}

// qr (reduced, tall): orgqr on geqrf's result itself, R its leading 3x3 block.
// CHECK-LABEL: func.func @test_qr_reduced
// CHECK-NEXT:    %[[G:.*]]:2 = "stablehlo.custom_call"(%arg0) {{.*}}"lapack_dgeqrf_ffi"
// CHECK-NEXT:    "stablehlo.custom_call"(%[[G]]#0, %[[G]]#1) {{.*}}"lapack_dorgqr_ffi"
// CHECK-NEXT:    "stablehlo.slice"(%[[G]]#0) {limit_indices = array<i64: 3, 3>
func.func @test_qr_reduced(%a: tensor<4x3xf64>) -> (tensor<4x3xf64>, tensor<3x3xf64>) {
  %0:2 = "mlax.qr"(%a) {full_matrices = false, pivoting = false} : (tensor<4x3xf64>) -> (tensor<4x3xf64>, tensor<3x3xf64>)
  return %0#0, %0#1 : tensor<4x3xf64>, tensor<3x3xf64>
}

// qr with pivoting (reduced, wide): jax's geqp3 on zero pivots (free columns; a row-major
// operand and result), its pivots less one the third result, orgqr on the leading 3x3 block.
// CHECK-LABEL: func.func @test_qr_pivoting
// CHECK:         %[[JPVT:.*]] = "stablehlo.broadcast_in_dim"(%{{.*}}) {{.*}} : (tensor<i32>) -> tensor<2x5xi32>
// CHECK-NEXT:    %[[G:.*]]:3 = "stablehlo.custom_call"(%arg0, %[[JPVT]]) {{.*}}call_target_name = "lapack_sgeqp3_ffi"{{.*}}operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x3x5xf32>, tensor<2x5xi32>) -> (tensor<2x3x5xf32>, tensor<2x5xi32>, tensor<2x3xf32>)
// CHECK:         %[[P:.*]] = "stablehlo.subtract"(%[[G]]#1, %{{.*}})
// CHECK-NEXT:    %[[B:.*]] = "stablehlo.slice"(%[[G]]#0) {limit_indices = array<i64: 2, 3, 3>
// CHECK-NEXT:    %[[Q:.*]] = "stablehlo.custom_call"(%[[B]], %[[G]]#2) {{.*}}"lapack_sorgqr_ffi"
// CHECK:         %[[R:.*]] = "stablehlo.select"(%{{.*}}, %{{.*}}, %[[G]]#0)
// CHECK-NEXT:    return %[[Q]], %[[R]], %[[P]]
func.func @test_qr_pivoting(%a: tensor<2x3x5xf32>) -> (tensor<2x3x3xf32>, tensor<2x3x5xf32>, tensor<2x5xi32>) {
  %0:3 = "mlax.qr"(%a) {full_matrices = false, pivoting = true} : (tensor<2x3x5xf32>) -> (tensor<2x3x3xf32>, tensor<2x3x5xf32>, tensor<2x5xi32>)
  return %0#0, %0#1, %0#2 : tensor<2x3x3xf32>, tensor<2x3x5xf32>, tensor<2x5xi32>
}

// eigh: syevd with mode 'V' (86) and uplo 'U' (85); NaN selects where info != 0.
// CHECK-LABEL: func.func @test_eigh
// CHECK-NEXT:    %[[E:.*]]:3 = "stablehlo.custom_call"(%arg0) {{.*}}call_target_name = "lapack_dsyevd_ffi"{{.*}}mhlo.backend_config = {mode = 86 : ui8, uplo = 85 : ui8}
// CHECK:         "stablehlo.compare"(%[[E]]#2, %{{.*}}) {{.*}}comparison_direction EQ
// CHECK:         %[[W:.*]] = "stablehlo.select"(%{{.*}}, %[[E]]#1, %{{.*}})
// CHECK:         %[[V:.*]] = "stablehlo.select"(%{{.*}}, %[[E]]#0, %{{.*}})
// CHECK-NEXT:    return %[[V]], %[[W]]
func.func @test_eigh(%a: tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xf64>) {
  %0:2 = "mlax.eigh"(%a) {lower = false, sort_eigenvalues = true} : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xf64>)
  return %0#0, %0#1 : tensor<4x4xf64>, tensor<4xf64>
}

// svd (reduced): gesdd with mode 'S' (83) and jax's five results (the overwritten operand, s,
// u, vt, info). It gets zeros for a matrix holding a NaN or an infinity (?gesdd may never
// return on one), whose results are NaN as those of a failed matrix.
// CHECK-LABEL: func.func @test_svd
// CHECK-NEXT:    %[[FINITE:.*]] = "stablehlo.is_finite"(%arg0)
// CHECK:         %[[FLAGS:.*]] = "stablehlo.reduce"(%[[FINITE]], %{{.*}})
// CHECK:           "stablehlo.and"
// CHECK:         }) {dimensions = array<i64: 1, 2>}
// CHECK:         %[[SAFE:.*]] = "stablehlo.select"(%{{.*}}, %arg0, %{{.*}})
// CHECK-NEXT:    %[[S:.*]]:5 = "stablehlo.custom_call"(%[[SAFE]]) {{.*}}call_target_name = "lapack_sgesdd_ffi"{{.*}}mhlo.backend_config = {mode = 83 : ui8}{{.*}} : (tensor<2x3x5xf32>) -> (tensor<2x3x5xf32>, tensor<2x3xf32>, tensor<2x3x3xf32>, tensor<2x3x5xf32>, tensor<2xi32>)
func.func @test_svd(%a: tensor<2x3x5xf32>) -> (tensor<2x3xf32>, tensor<2x3x3xf32>, tensor<2x3x5xf32>) {
  %0:3 = "mlax.svd"(%a) {compute_uv = true, full_matrices = false} : (tensor<2x3x5xf32>) -> (tensor<2x3xf32>, tensor<2x3x3xf32>, tensor<2x3x5xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x3xf32>, tensor<2x3x3xf32>, tensor<2x3x5xf32>
}

// Without vectors: mode 'N' (78), u and vt still typed as jax types them (full here).
// CHECK-LABEL: func.func @test_svd_2x3
// CHECK:         "stablehlo.custom_call"(%{{.*}}) {{.*}}mhlo.backend_config = {mode = 78 : ui8}{{.*}} -> (tensor<2x3xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<i32>)
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

// QR: result[0]: tensor<2x2xf32> = {{\[\[}}-0.6, -0.8], [-0.8, 0.6]]
// QR: result[1]: tensor<2x1xf32> = {{\[\[}}-5.0], [0.0]]
func.func @test_qr_2x1(%a: tensor<2x1xf32>) -> (tensor<2x2xf32>, tensor<2x1xf32>) {
  %0:2 = "mlax.qr"(%a) {full_matrices = true, pivoting = false} : (tensor<2x1xf32>) -> (tensor<2x2xf32>, tensor<2x1xf32>)
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x1xf32>
}

// QRP: result[0]: tensor<2x2xf32> = {{\[\[}}-0.6, -0.8], [-0.8, 0.6]]
// QRP: result[1]: tensor<2x2xf32> = {{\[\[}}-5.0, -0.6], [0.0, -0.8]]
// QRP: result[2]: tensor<2xi32> = [1, 0]
func.func @test_qr_pivoting_2x2(%a: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xi32>) {
  %0:3 = "mlax.qr"(%a) {full_matrices = true, pivoting = true} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xi32>)
  return %0#0, %0#1, %0#2 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xi32>
}
