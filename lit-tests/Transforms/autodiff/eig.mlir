// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s
// RUN: %mlax-opt --mlax-expand-transforms %s | %mlax-run --entry trace_grad --backend cpu --precision 4 --input '[[2, 1], [0, 3]]' | FileCheck %s --check-prefix=NUM
// RUN: %mlax-opt --mlax-expand-transforms %s | %mlax-run --entry trace_grad --backend xla --precision 4 --input '[[2, 1], [0, 3]]' | FileCheck %s --check-prefix=NUM

// eig's JVP (jax's eig_jvp_rule): with eigenvalues only, the right eigenvectors V come from a
// second eig, and dw = diag(V^-1 dA V): the real tangent made complex, solved through an LU of
// V (the permutation applied to its rows, two triangular solves), times V^T, summed per row.
// CHECK-LABEL: func.func private @eigenvalues_jvp
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<2x2xf32>, %[[T:[a-zA-Z0-9_]+]]: tensor<2x2xf32>)
// CHECK:         %[[W:.*]] = "mlax.eig"(%[[A]]) {compute_left_eigenvectors = false, compute_right_eigenvectors = false
// CHECK:         %[[V:.*]]:2 = "mlax.eig"(%[[A]]) {compute_left_eigenvectors = false, compute_right_eigenvectors = true
// CHECK:         %[[TC:.*]] = "mlax.convert"(%[[T]]) {new_dtype = complex<f32>}
// CHECK:         %[[LU:.*]]:3 = "mlax.lu"(%[[V]]#1)
// CHECK:         %[[P:.*]] = "mlax.apply_permutation"(%[[TC]], %{{.*}})
// CHECK:         %[[Y:.*]] = "mlax.triangular_solve"(%[[LU]]#0, %[[P]]) {conjugate_a = false, left_side = true, lower = true, transpose_a = false, unit_diagonal = true}
// CHECK:         %[[X:.*]] = "mlax.triangular_solve"(%[[LU]]#0, %[[Y]]) {conjugate_a = false, left_side = true, lower = false, transpose_a = false, unit_diagonal = false}
// CHECK:         %[[VT:.*]] = "mlax.transpose"(%[[V]]#1)
// CHECK:         %[[M:.*]] = "mlax.mul"(%[[X]], %[[VT]])
// CHECK:         %[[DW:.*]] = "mlax.reduce_sum"(%[[M]]) {dimensions = array<i64: 1>}
// CHECK:         return %[[W]], %[[DW]]
func.func @eigenvalues(%a: tensor<2x2xf32>) -> tensor<2xcomplex<f32>> {
  %0 = "mlax.eig"(%a) {compute_left_eigenvectors = false, compute_right_eigenvectors = false, enable_eigvec_derivs = false} : (tensor<2x2xf32>) -> tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}
func.func private @eigenvalues_jvp(tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) attributes {mlax.jvp = {callee = @eigenvalues}}

// The sum of the eigenvalues is the trace, so its gradient is the identity.
// NUM: result[0]: tensor<2x2xf32> = {{\[\[}}1, 0], [0, 1]]
func.func @trace(%a: tensor<2x2xf32>) -> tensor<f32> {
  %0 = "mlax.eig"(%a) {compute_left_eigenvectors = false, compute_right_eigenvectors = false, enable_eigvec_derivs = false} : (tensor<2x2xf32>) -> tensor<2xcomplex<f32>>
  %1 = "mlax.real"(%0) : (tensor<2xcomplex<f32>>) -> tensor<2xf32>
  %2 = "mlax.reduce_sum"(%1) {dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}
func.func private @trace_vjp(tensor<2x2xf32>, tensor<f32>) -> (tensor<f32>, tensor<2x2xf32>) attributes {mlax.vjp = {callee = @trace, argnums = array<i64: 0>}}
func.func @trace_grad(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %0:2 = func.call @trace_vjp(%a, %one) : (tensor<2x2xf32>, tensor<f32>) -> (tensor<f32>, tensor<2x2xf32>)
  return %0#1 : tensor<2x2xf32>
}
