// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null
// RUN: %mlax-run %s --entry test_eig_rotation --backend cpu --input '[[0, -1], [1, 0]]' | FileCheck %s --check-prefix=ROT
// RUN: %mlax-run %s --entry test_eig_rotation --backend interpreter --input '[[0, -1], [1, 0]]' | FileCheck %s --check-prefix=ROT
// RUN: %mlax-run %s --entry test_eig_complex --backend cpu --input '[[[2, 1], [0, 3]]]' | FileCheck %s --check-prefix=TRI

// eig calls LAPACKE ?geev row-major (101) on a copy of each matrix, with jobvl/jobvr 'V' (86) or
// 'N' (78); a vector set not asked for gets a 1x1 dummy buffer and leading dimension 1. As
// jaxlib, a matrix holding a NaN or an infinity (its ?lange 'M' (77) norm is not below +inf) is
// not given to ?geev: its info is -4 and its results NaN.
// CHECK-DAG:   func.func private @mlax_sgeev(i32, i8, i8, i32, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i32) -> i32
// CHECK-DAG:   func.func private @mlax_zgeev(i32, i8, i8, i32, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i32) -> i32

// A real matrix: the eigenvalues are complex(wr, wi); the eigenvectors are unpacked from geev's
// real columns (a conjugate pair stored as real and imaginary parts in two columns) by one
// generic reading the partner column, NaN where info != 0.
// CHECK-LABEL: func.func @test_eig_rotation
// CHECK:         %[[VR:.*]] = memref.alloc() : memref<1x2x2xf32>
// CHECK:         %[[NORM:.*]] = call @mlax_slange(%{{.*}}, %c77_i8, %{{.*}}) : (i32, i8, i32, i32, !llvm.ptr, i32) -> f32
// CHECK:         %[[FINITE:.*]] = arith.cmpf olt, %[[NORM]], %cst
// CHECK:         scf.if %[[FINITE]] -> (i32) {
// CHECK:           func.call @mlax_sgeev(%c101_i32{{.*}}, %c78_i8, %c86_i8, %c2_i32{{.*}})
// CHECK:         } else {
// CHECK:           scf.yield %c-4_i32
// CHECK:         linalg.generic
// CHECK:           complex.create
// CHECK:         linalg.generic
// CHECK:           arith.cmpf ogt
// CHECK:           arith.cmpf olt
// CHECK:           tensor.extract
// CHECK:           tensor.extract
// CHECK:           complex.create
// ROT: result[0]: tensor<2xcomplex<f32>> = [(0.0, 1.0), (0.0, -1.0)]
// ROT: result[1]: tensor<2x2xcomplex<f32>> = {{\[\[}}(0.70710677, 0.0), (0.70710677, -0.0)], [(0.0, -0.70710677), (0.0, 0.70710677)]]
func.func @test_eig_rotation(%a: tensor<2x2xf32>) -> (tensor<2xcomplex<f32>>, tensor<2x2xcomplex<f32>>) {
  %0:2 = "mlax.eig"(%a) {compute_left_eigenvectors = false, compute_right_eigenvectors = true, enable_eigvec_derivs = false} : (tensor<2x2xf32>) -> (tensor<2xcomplex<f32>>, tensor<2x2xcomplex<f32>>)
  return %0#0, %0#1 : tensor<2xcomplex<f32>>, tensor<2x2xcomplex<f32>>
}

// A complex matrix: zgeev's results are complex already; eigenvalues only (both jobs 'N').
// CHECK-LABEL: func.func @test_eig_complex
// CHECK:         call @mlax_zlange({{.*}}) : (i32, i8, i32, i32, !llvm.ptr, i32) -> f64
// CHECK:         func.call @mlax_zgeev(%c101_i32{{.*}}, %c78_i8, %c78_i8{{.*}}, %c2_i32{{.*}}, {{.*}}, %c1_i32, {{.*}}, %c1_i32{{.*}})
// CHECK-NOT:     tensor.extract
// CHECK:         return
// TRI: result[0]: tensor<1x2xcomplex<f64>> = {{\[\[}}(2.0, 0.0), (3.0, 0.0)]]
func.func @test_eig_complex(%a: tensor<1x2x2xcomplex<f64>>) -> tensor<1x2xcomplex<f64>> {
  %0 = "mlax.eig"(%a) {compute_left_eigenvectors = false, compute_right_eigenvectors = false, enable_eigvec_derivs = false} : (tensor<1x2x2xcomplex<f64>>) -> tensor<1x2xcomplex<f64>>
  return %0 : tensor<1x2xcomplex<f64>>
}
