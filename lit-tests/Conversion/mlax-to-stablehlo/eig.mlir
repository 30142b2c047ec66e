// RUN: %mlax-opt %s --allow-unregistered-dialect --mlax-lower-to-stablehlo | FileCheck %s
// RUN: %mlax-run %s --entry test_eig_rotation --backend xla --input '[[0, -1], [1, 0]]' | FileCheck %s --check-prefix=ROT

// eig is what jax emits on CPU: jaxlib's lapack_?geev_ffi with compute_left/compute_right 'V'
// (86) or 'N' (78), matrices column-major. A real matrix gives the eigenvalues' real and
// imaginary parts (stablehlo.complex joins them) and complex eigenvectors; every result of a
// matrix whose info != 0 is NaN; only the vector sets asked for are results of the op.
// CHECK-LABEL: func.func @test_eig_rotation
// CHECK-NEXT:    %[[C:.*]]:5 = "stablehlo.custom_call"(%arg0) {{.*}}call_target_name = "lapack_sgeev_ffi"{{.*}}mhlo.backend_config = {compute_left = 78 : ui8, compute_right = 86 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<2x2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2x2xcomplex<f32>>, tensor<2x2xcomplex<f32>>, tensor<i32>)
// CHECK:         %[[OK:.*]] = "stablehlo.compare"(%[[C]]#4, %{{.*}}) {{.*}}comparison_direction EQ
// CHECK:         %[[W:.*]] = "stablehlo.complex"(%[[C]]#0, %[[C]]#1)
// CHECK:         "stablehlo.select"(%{{.*}}, %[[W]], %{{.*}})
// CHECK:         "stablehlo.select"(%{{.*}}, %[[C]]#3, %{{.*}})
// ROT: result[0]: tensor<2xcomplex<f32>> = [(0.0, 1.0), (0.0, -1.0)]
// ROT: result[1]: tensor<2x2xcomplex<f32>> = {{\[\[}}(0.70710677, 0.0), (0.70710677, -0.0)], [(0.0, -0.70710677), (0.0, 0.70710677)]]
func.func @test_eig_rotation(%a: tensor<2x2xf32>) -> (tensor<2xcomplex<f32>>, tensor<2x2xcomplex<f32>>) {
  %0:2 = "mlax.eig"(%a) {compute_left_eigenvectors = false, compute_right_eigenvectors = true, enable_eigvec_derivs = false} : (tensor<2x2xf32>) -> (tensor<2xcomplex<f32>>, tensor<2x2xcomplex<f32>>)
  return %0#0, %0#1 : tensor<2xcomplex<f32>>, tensor<2x2xcomplex<f32>>
}

// A complex matrix: zgeev gives the eigenvalues themselves (4 results).
// CHECK-LABEL: func.func @test_eig_complex
// CHECK-NEXT:    %[[Z:.*]]:4 = "stablehlo.custom_call"(%arg0) {{.*}}call_target_name = "lapack_zgeev_ffi"{{.*}}mhlo.backend_config = {compute_left = 86 : ui8, compute_right = 78 : ui8}
// CHECK-NOT:     stablehlo.complex
// CHECK:         "stablehlo.select"(%{{.*}}, %[[Z]]#0, %{{.*}})
// CHECK:         "stablehlo.select"(%{{.*}}, %[[Z]]#1, %{{.*}})
func.func @test_eig_complex(%a: tensor<3x3xcomplex<f64>>) -> (tensor<3xcomplex<f64>>, tensor<3x3xcomplex<f64>>) {
  %0:2 = "mlax.eig"(%a) {compute_left_eigenvectors = true, compute_right_eigenvectors = false, enable_eigvec_derivs = false} : (tensor<3x3xcomplex<f64>>) -> (tensor<3xcomplex<f64>>, tensor<3x3xcomplex<f64>>)
  return %0#0, %0#1 : tensor<3xcomplex<f64>>, tensor<3x3xcomplex<f64>>
}
