// RUN: %mlax-opt %s --allow-unregistered-dialect --mlax-lower-to-stablehlo | FileCheck %s
// RUN: %mlax-run %s --entry test_schur_real --backend xla --input '[[4, 1], [2, 3]]' | FileCheck %s --check-prefix=REAL
// RUN: %mlax-run %s --entry test_schur_complex --backend xla --input '[[[1, 2], [-3, 1]]]' | FileCheck %s --check-prefix=CPLX

// schur is what jax emits on CPU: jaxlib's lapack_?gees_ffi with mode 'V' (86) or 'N' (78) and
// sort 'N', matrices column-major. The results are T, Z, the eigenvalues (a real matrix's real
// and imaginary parts), sdim and info; T and Z of a matrix whose info != 0 are NaN, and Z is a
// result of the op only when asked for.
// CHECK-LABEL: func.func @test_schur_real
// CHECK-NEXT:    %[[C:.*]]:6 = "stablehlo.custom_call"(%arg0) {{.*}}call_target_name = "lapack_sgees_ffi"{{.*}}mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>]} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<i32>, tensor<i32>)
// CHECK:         "stablehlo.compare"(%[[C]]#5, %{{.*}}) {{.*}}comparison_direction EQ
// CHECK:         "stablehlo.select"(%{{.*}}, %[[C]]#0, %{{.*}})
// CHECK:         "stablehlo.select"(%{{.*}}, %[[C]]#1, %{{.*}})
// REAL: result[0]: tensor<2x2xf32> = {{\[\[}}5.0, -1.0], [0.0, 1.9999999]]
// REAL: result[1]: tensor<2x2xf32> = {{\[\[}}0.70710677, -0.70710677], [0.70710677, 0.70710677]]
func.func @test_schur_real(%a: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %0:2 = "mlax.schur"(%a) {compute_schur_vectors = true} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x2xf32>
}

// A batch of complex matrices without vectors: cgees' 5 results (complex eigenvalues), T alone.
// CHECK-LABEL: func.func @test_schur_complex
// CHECK-NEXT:    %[[Z:.*]]:5 = "stablehlo.custom_call"(%arg0) {{.*}}call_target_name = "lapack_cgees_ffi"{{.*}}mhlo.backend_config = {mode = 78 : ui8, sort = 78 : ui8}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>]
// CHECK-SAME:    -> (tensor<1x2x2xcomplex<f32>>, tensor<1x2x2xcomplex<f32>>, tensor<1x2xcomplex<f32>>, tensor<1xi32>, tensor<1xi32>)
// CHECK:         %[[T:.*]] = "stablehlo.select"(%{{.*}}, %[[Z]]#0, %{{.*}})
// CHECK-NOT:     "stablehlo.select"
// CHECK:         return %[[T]]
// CPLX: result[0]: tensor<1x2x2xcomplex<f32>> = {{\[\[\[}}(1.0000002, 2.44949), (-0.9035083, 0.4285717)], [(0.0, 0.0), (1.0, -2.4494896)]]]
func.func @test_schur_complex(%a: tensor<1x2x2xcomplex<f32>>) -> tensor<1x2x2xcomplex<f32>> {
  %0 = "mlax.schur"(%a) {compute_schur_vectors = false} : (tensor<1x2x2xcomplex<f32>>) -> tensor<1x2x2xcomplex<f32>>
  return %0 : tensor<1x2x2xcomplex<f32>>
}
