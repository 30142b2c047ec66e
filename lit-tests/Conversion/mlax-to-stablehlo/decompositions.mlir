// RUN: %mlax-opt %s --allow-unregistered-dialect --mlax-lower-to-stablehlo | FileCheck %s
// RUN: %mlax-run %s --entry test_cholesky_2x2 --backend xla --input '[[-4, 2], [2, 5]]' | FileCheck %s --check-prefix=FAILED
// RUN: %mlax-run %s --entry test_lu_3x3 --backend xla --input '[[1, 2, 0], [4, 1, 1], [2, 8, 2]]' | FileCheck %s --check-prefix=LU

// The decompositions are what jax emits on CPU: custom calls of jaxlib's LAPACK targets
// (typed FFI: the flags as ui8 characters in mhlo.backend_config, matrices column-major).
// cholesky: potrf with uplo 'L' (76); NaN where info != 0, then the upper triangle zeroed.
// CHECK-LABEL: func.func @test_cholesky
// CHECK-NEXT:    %[[C:.*]]:2 = "stablehlo.custom_call"(%arg0) {api_version = 1 : i32, backend_config = "", call_target_name = "lapack_spotrf_ffi", has_side_effect = false, mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2xi32>)
// CHECK:         %[[OK:.*]] = "stablehlo.compare"(%[[C]]#1, %{{.*}}) {{.*}}comparison_direction EQ
// CHECK:         %[[NAN:.*]] = "stablehlo.select"(%{{.*}}, %[[C]]#0, %{{.*}})
// CHECK:         %[[LOW:.*]] = "stablehlo.compare"(%{{.*}}, %{{.*}}) {{.*}}comparison_direction GE
// CHECK:         %[[R:.*]] = "stablehlo.select"(%[[LOW]], %[[NAN]], %{{.*}})
// CHECK-NEXT:    return %[[R]]
func.func @test_cholesky(%a: tensor<2x3x3xf32>) -> tensor<2x3x3xf32> {
  %0 = "mlax.cholesky"(%a) : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  return %0 : tensor<2x3x3xf32>
}

// FAILED: result[0]: tensor<2x2xf32> = {{\[\[}}nan, 0.0], [nan, nan]]
func.func @test_cholesky_2x2(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = "mlax.cholesky"(%a) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// triangular_solve: trsm with side 'R' (82), uplo 'U' (85), trans_x 'T' (84), diag 'U' (85).
// CHECK-LABEL: func.func @test_triangular_solve
// CHECK-NEXT:    %[[X:.*]] = "stablehlo.custom_call"(%arg0, %arg1) {{.*}}call_target_name = "lapack_dtrsm_ffi"{{.*}}mhlo.backend_config = {diag = 85 : ui8, side = 82 : ui8, trans_x = 84 : ui8, uplo = 85 : ui8}
// CHECK-NEXT:    return %[[X]]
func.func @test_triangular_solve(%a: tensor<3x3xf64>, %b: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %0 = "mlax.triangular_solve"(%a, %b) {conjugate_a = false, left_side = false, lower = false, transpose_a = true, unit_diagonal = true} : (tensor<3x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}

// lu: getrf, pivots made 0-based, NaN where info < 0, and the permutation built from the
// pivots by a while loop over the swaps.
// CHECK-LABEL: func.func @test_lu
// CHECK-NEXT:    %[[L:.*]]:3 = "stablehlo.custom_call"(%arg0) {{.*}}call_target_name = "lapack_sgetrf_ffi"
// CHECK:         %[[P:.*]] = "stablehlo.subtract"(%[[L]]#1, %{{.*}})
// CHECK:         "stablehlo.compare"(%[[L]]#2, %{{.*}}) {{.*}}comparison_direction GE
// CHECK:         %[[W:.*]]:3 = "stablehlo.while"(%{{.*}}, %{{.*}}, %[[P]])
// CHECK:         return %{{.*}}, %[[P]], %[[W]]#1
func.func @test_lu(%a: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xi32>, tensor<4xi32>) {
  %0:3 = "mlax.lu"(%a) : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xi32>, tensor<4xi32>)
  return %0#0, %0#1, %0#2 : tensor<4x3xf32>, tensor<3xi32>, tensor<4xi32>
}

// LU: result[1]: tensor<3xi32> = [1, 2, 2]
// LU: result[2]: tensor<3xi32> = [1, 2, 0]
func.func @test_lu_3x3(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xi32>, tensor<3xi32>) {
  %0:3 = "mlax.lu"(%a) : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xi32>, tensor<3xi32>)
  return %0#0, %0#1, %0#2 : tensor<3x3xf32>, tensor<3xi32>, tensor<3xi32>
}
