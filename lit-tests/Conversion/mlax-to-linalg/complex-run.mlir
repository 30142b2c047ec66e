// Complex math pinned by value on the interpreter and the CPU backend (complex dialect, then
// complex-to-standard), and on XLA: sin/cos from expm1 (JAX's forms), log1p, pow,
// lexicographic max and reduce_max, reduce_prod, and a 2x2 matmul (cgemm on the CPU).
// RUN: %mlax-run %s --entry main --precision 6 --input '[0.5+2j, -1+1e-9j]' --input '[0.5-1j, 2+0.25j]' | FileCheck %s
// RUN: %mlax-run %s --entry main --precision 6 --backend cpu --input '[0.5+2j, -1+1e-9j]' --input '[0.5-1j, 2+0.25j]' | FileCheck %s
// RUN: %mlax-run %s --entry main --precision 6 --backend xla --input '[0.5+2j, -1+1e-9j]' --input '[0.5-1j, 2+0.25j]' | FileCheck %s

// The numbers are jax's (jax.lax.sin, max, reduce_max, prod, log1p, pow, @ on the same inputs).
// CHECK:      result[0]: tensor<2xcomplex<f32>> = [(1.80369, 3.18287), (-0.841471, 5.40302e-10)]
// CHECK-NEXT: result[1]: tensor<2xcomplex<f32>> = [(0.5, 2), (2, 0.25)]
// CHECK-NEXT: result[2]: tensor<complex<f32>> = (2, 0.25)
// CHECK-NEXT: result[3]: tensor<complex<f32>> = (-0.5, -2)
// CHECK-NEXT: result[4]: tensor<2xcomplex<f32>> = [(0.916291, 0.927295), (-20.7233, 1.5708)]
// CHECK-NEXT: result[5]: tensor<2xcomplex<f32>> = [(5.3963, -0.327149), (0.455938, 7.97188e-08)]
// CHECK-NEXT: result[6]: tensor<2x2xcomplex<f32>> = {{\[\[}}(-4.25, 3), (-2.5, -2.25)], [(3.5, -1.375), (3.4375, 2)]]
// CHECK-EMPTY:
func.func @main(%z: tensor<2xcomplex<f32>>, %w: tensor<2xcomplex<f32>>)
    -> (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>, tensor<complex<f32>>, tensor<complex<f32>>,
        tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>, tensor<2x2xcomplex<f32>>) {
  %sin = "mlax.sin"(%z) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  %max = "mlax.max"(%z, %w) : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  %rmax = "mlax.reduce_max"(%w) {dimensions = array<i64: 0>} : (tensor<2xcomplex<f32>>) -> tensor<complex<f32>>
  %prod = "mlax.reduce_prod"(%z) {dimensions = array<i64: 0>} : (tensor<2xcomplex<f32>>) -> tensor<complex<f32>>
  %log1p = "mlax.log1p"(%z) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  %pow = "mlax.pow"(%z, %w) : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  %b = "mlax.concatenate"(%z, %w) {dimension = 0 : i64} : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %m = "mlax.reshape"(%b) {shape = array<i64: 2, 2>} : (tensor<4xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
  %mm = "mlax.dot_general"(%m, %m) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = complex<f32>} : (tensor<2x2xcomplex<f32>>, tensor<2x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
  return %sin, %max, %rmax, %prod, %log1p, %pow, %mm : tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>, tensor<complex<f32>>, tensor<complex<f32>>, tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>, tensor<2x2xcomplex<f32>>
}
