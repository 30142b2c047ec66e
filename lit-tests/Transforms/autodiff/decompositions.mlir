// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s
// RUN: %mlax-opt --mlax-expand-transforms %s | %mlax-run --entry g_grad --backend cpu --input '[[2, 0], [1, 4]]' --input '[[2], [3]]' --input '[[1], [1]]' | FileCheck %s --check-prefix=NUM

// cholesky's JVP (jax's, Murray 2016): L' = L phi(L^-1 A' L^-H), two triangular_solves of the
// tangent (the right-side one transposed), phi the lower triangle with its diagonal halved.
// CHECK-LABEL: func.func private @f_jvp
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<3x3xf32>, %[[T:[a-zA-Z0-9_]+]]: tensor<3x3xf32>)
// CHECK:         %[[L:.*]] = "mlax.cholesky"(%[[A]])
// CHECK:         %[[S1:.*]] = "mlax.triangular_solve"(%[[L]], %[[T]]) {conjugate_a = true, left_side = false, lower = true, transpose_a = true, unit_diagonal = false}
// CHECK:         %[[S2:.*]] = "mlax.triangular_solve"(%[[L]], %[[S1]]) {conjugate_a = false, left_side = true, lower = true, transpose_a = false, unit_diagonal = false}
// CHECK:         %[[TRIL:.*]] = "mlax.select"(%{{.*}}, %[[S2]], %{{.*}})
// CHECK:         %[[PHI:.*]] = "mlax.mul"(%[[TRIL]], %{{.*}})
// CHECK:         %[[D:.*]] = "mlax.dot_general"(%[[L]], %[[PHI]])
// CHECK:         return %[[L]], %[[D]]
func.func @f(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = "mlax.cholesky"(%a) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}
func.func private @f_jvp(tensor<3x3xf32>, tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>) attributes {mlax.jvp = {callee = @f}}

// triangular_solve is linear in b: its transpose is the same solve with transpose_a flipped.
// CHECK-LABEL: func.func private @g_vjp
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<2x2xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<2x1xf32>, %[[C:[a-zA-Z0-9_]+]]: tensor<2x1xf32>)
// CHECK:         %[[X:.*]] = "mlax.triangular_solve"(%[[A]], %[[B]]) {conjugate_a = false, left_side = true, lower = true, transpose_a = false, unit_diagonal = false}
// CHECK:         %[[CB:.*]] = "mlax.triangular_solve"(%[[A]], %[[C]]) {conjugate_a = false, left_side = true, lower = true, transpose_a = true, unit_diagonal = false}
// CHECK:         return %[[X]], %[[CB]]
func.func @g(%a: tensor<2x2xf32>, %b: tensor<2x1xf32>) -> tensor<2x1xf32> {
  %0 = "mlax.triangular_solve"(%a, %b) {conjugate_a = false, left_side = true, lower = true, transpose_a = false, unit_diagonal = false} : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}
func.func private @g_vjp(tensor<2x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>) -> (tensor<2x1xf32>, tensor<2x1xf32>) attributes {mlax.vjp = {callee = @g, argnums = array<i64: 1>}}

// The cotangent of b for A = [[2, 0], [1, 4]] and a cotangent of ones: A^-T [1, 1] = [0.375, 0.25].
// NUM: result[0]: tensor<2x1xf32> = {{\[\[}}1.0], [0.5]]
// NUM: result[1]: tensor<2x1xf32> = {{\[\[}}0.375], [0.25]]
func.func @g_grad(%a: tensor<2x2xf32>, %b: tensor<2x1xf32>, %c: tensor<2x1xf32>) -> (tensor<2x1xf32>, tensor<2x1xf32>) {
  %0:2 = func.call @g_vjp(%a, %b, %c) : (tensor<2x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>) -> (tensor<2x1xf32>, tensor<2x1xf32>)
  return %0#0, %0#1 : tensor<2x1xf32>, tensor<2x1xf32>
}
