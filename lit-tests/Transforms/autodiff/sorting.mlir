// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s

// A sort is sort_permutation (no tangent: integers) and apply_permutation, linear in its
// operand: the JVP reads the tangent in the same order; the transpose reads the cotangent
// in the inverse order, the sort_permutation of the indices.
// CHECK-LABEL: func.func private @f_jvp
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x5xf32>, %[[T:[a-zA-Z0-9_]+]]: tensor<2x5xf32>)
// CHECK:         %[[P:.*]] = "mlax.sort_permutation"(%[[X]]) {dimension = 1 : i64}
// CHECK:         %[[Y:.*]] = "mlax.apply_permutation"(%[[X]], %[[P]]) {dimension = 1 : i64}
// CHECK:         %[[TY:.*]] = "mlax.apply_permutation"(%[[T]], %[[P]]) {dimension = 1 : i64}
// CHECK:         return %[[Y]], %[[TY]]
// CHECK-LABEL: func.func private @f_vjp
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x5xf32>, %[[C:[a-zA-Z0-9_]+]]: tensor<2x5xf32>)
// CHECK:         %[[P:.*]] = "mlax.sort_permutation"(%[[X]]) {dimension = 1 : i64}
// CHECK:         %[[Y:.*]] = "mlax.apply_permutation"(%[[X]], %[[P]])
// CHECK:         %[[INV:.*]] = "mlax.sort_permutation"(%[[P]]) {dimension = 1 : i64} : (tensor<2x5xi32>) -> tensor<2x5xi32>
// CHECK:         %[[CX:.*]] = "mlax.apply_permutation"(%[[C]], %[[INV]]) {dimension = 1 : i64}
// CHECK:         return %[[Y]], %[[CX]]
func.func @f(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %p = "mlax.sort_permutation"(%x) {dimension = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xi32>
  %0 = "mlax.apply_permutation"(%x, %p) {dimension = 1 : i64} : (tensor<2x5xf32>, tensor<2x5xi32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}
func.func private @f_jvp(tensor<2x5xf32>, tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>) attributes {mlax.jvp = {callee = @f}}
func.func private @f_vjp(tensor<2x5xf32>, tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>) attributes {mlax.vjp = {callee = @f, argnums = array<i64: 0>}}

// top_k: the values' cotangent goes back to the chosen indices through the transposes of
// the JVP's one-hot selection (broadcast, select with the primal predicate indices ==
// iota, reduce_sum): a select and a reduce_sum over the k dimension.
// CHECK-LABEL: func.func private @g_vjp
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<5xf32>, %[[C:[a-zA-Z0-9_]+]]: tensor<2xf32>)
// CHECK:         %[[TOP:.*]]:2 = "mlax.top_k"(%[[X]]) {k = 2 : i64}
// CHECK:         %[[I:.*]] = "mlax.broadcast_in_dim"(%[[TOP]]#1) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 2, 5>}
// CHECK:         %[[IOTA:.*]] = "mlax.iota"() {dimension = 1 : i64, dtype = i32, shape = array<i64: 2, 5>}
// CHECK:         %[[HIT:.*]] = "mlax.compare"(%[[I]], %[[IOTA]]) {comparison_direction = "EQ"}
// CHECK:         %[[SPREAD:.*]] = "mlax.broadcast_in_dim"(%[[C]]) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 2, 5>}
// CHECK:         %[[PICK:.*]] = "mlax.select"(%[[HIT]], %[[SPREAD]], %{{.*}})
// CHECK:         %[[CX:.*]] = "mlax.reduce_sum"(%[[PICK]]) {dimensions = array<i64: 0>} : (tensor<2x5xf32>) -> tensor<5xf32>
// CHECK:         return %[[TOP]]#0, %[[CX]]
func.func @g(%x: tensor<5xf32>) -> tensor<2xf32> {
  %0:2 = "mlax.top_k"(%x) {k = 2 : i64} : (tensor<5xf32>) -> (tensor<2xf32>, tensor<2xi32>)
  return %0#0 : tensor<2xf32>
}
func.func private @g_vjp(tensor<5xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<5xf32>) attributes {mlax.vjp = {callee = @g, argnums = array<i64: 0>}}
