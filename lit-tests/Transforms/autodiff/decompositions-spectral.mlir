// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s
// RUN: %mlax-opt --mlax-expand-transforms %s | %mlax-run --entry g_grad --backend cpu --input '[[3, 0], [0, 4], [0, 0]]' --input '[1, 1]' | FileCheck %s --check-prefix=NUM

// eigh's JVP (jax's, distinct eigenvalues): with Y = V^T A' V, V' = V (F * Y), F_ij =
// 1 / (w_j - w_i) off the diagonal (jax's 1 / (gaps + I) - I), and w' = diag(Y), a masked sum.
// CHECK-LABEL: func.func private @f_jvp
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<3x3xf32>, %[[T:[a-zA-Z0-9_]+]]: tensor<3x3xf32>)
// CHECK:         %[[E:.*]]:2 = "mlax.eigh"(%[[A]])
// CHECK:         %[[GAPS:.*]] = "mlax.sub"
// CHECK:         %[[VT:.*]] = "mlax.transpose"(%[[E]]#0)
// CHECK:         %[[VTT:.*]] = "mlax.dot_general"(%[[VT]], %[[T]])
// CHECK:         %[[Y:.*]] = "mlax.dot_general"(%[[VTT]], %[[E]]#0)
// CHECK:         %[[F:.*]] = "mlax.div"
// CHECK:         %[[FY:.*]] = "mlax.mul"(%{{.*}}, %[[Y]])
// CHECK:         %[[DV:.*]] = "mlax.dot_general"(%[[E]]#0, %[[FY]])
// CHECK:         %[[DW:.*]] = "mlax.reduce_sum"
// CHECK:         return %[[E]]#0, %[[E]]#1, %[[DV]], %[[DW]]
func.func @f(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>) {
  %0:2 = "mlax.eigh"(%a) {lower = true, sort_eigenvalues = true} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3x3xf32>, tensor<3xf32>
}
func.func private @f_jvp(tensor<3x3xf32>, tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<3xf32>) attributes {mlax.jvp = {callee = @f}}

// svd without vectors: the rule needs U and V, so it runs a reduced svd beside the op (as
// jax's rule binds one); s' = diag(U^T A' V), whose transpose is U diag(s_bar) V^T.
// CHECK-LABEL: func.func private @g_vjp
// CHECK:         %[[S:.*]]:3 = "mlax.svd"(%arg0) {compute_uv = false, full_matrices = false}
// CHECK:         %[[R:.*]]:3 = "mlax.svd"(%arg0) {compute_uv = true, full_matrices = false}
// CHECK:         return %[[S]]#0, %{{.*}} : tensor<2xf32>, tensor<3x2xf32>
func.func @g(%a: tensor<3x2xf32>) -> tensor<2xf32> {
  %0:3 = "mlax.svd"(%a) {compute_uv = false, full_matrices = false} : (tensor<3x2xf32>) -> (tensor<2xf32>, tensor<0x0xf32>, tensor<0x0xf32>)
  return %0#0 : tensor<2xf32>
}
func.func private @g_vjp(tensor<3x2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) attributes {mlax.vjp = {callee = @g, argnums = array<i64: 0>}}

// The gradient of s_1 + s_2 of [[3, 0], [0, 4], [0, 0]] is U V^T = the leading identity block.
// NUM: result[0]: tensor<2xf32> = [4.0, 3.0]
// NUM: result[1]: tensor<3x2xf32> = {{\[\[}}1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
func.func @g_grad(%a: tensor<3x2xf32>, %c: tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  %0:2 = func.call @g_vjp(%a, %c) : (tensor<3x2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<3x2xf32>
}

// qr of a wide matrix (jax's rule): the square block X1 = Q R1 by the thin-QR rule (a right
// triangular_solve of the tangent by R1, the skew-symmetric part of Q^T X1' R1^-1), and
// R2' = Q'^T X2 + Q^T X2', concatenated after R1'.
// CHECK-LABEL: func.func private @h_jvp
// CHECK:         %[[QR:.*]]:2 = "mlax.qr"(%arg0) {full_matrices = false, pivoting = false}
// CHECK:         %[[R1:.*]] = "mlax.slice"(%[[QR]]#1) {limit_indices = array<i64: 2, 2>
// CHECK:         %[[T1:.*]] = "mlax.slice"(%arg1) {limit_indices = array<i64: 2, 2>
// CHECK:         "mlax.triangular_solve"(%[[R1]], %[[T1]]) {conjugate_a = false, left_side = false, lower = false, transpose_a = false, unit_diagonal = false}
// CHECK:         %[[DR:.*]] = "mlax.concatenate"(%{{.*}}, %{{.*}}) {dimension = 1 : i64} : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK:         return %[[QR]]#0, %[[QR]]#1, %{{.*}}, %[[DR]]
func.func @h(%a: tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>) {
  %0:2 = "mlax.qr"(%a) {full_matrices = false, pivoting = false} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>)
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x3xf32>
}
func.func private @h_jvp(tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x3xf32>) attributes {mlax.jvp = {callee = @h}}
