// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s
// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s --check-prefix=FWD
// RUN: %mlax-opt --mlax-autodiff %s | %mlax-run --entry grad_net --random-inputs 3 | FileCheck %s --check-prefix=GRAD
// RUN: %mlax-opt --mlax-autodiff %s | %mlax-run --entry grad_net_flat --random-inputs 3 | FileCheck %s --check-prefix=GRAD
// RUN: %mlax-opt --mlax-autodiff %s | %mlax-run --entry jvp_net --random-inputs 5 | FileCheck %s --check-prefix=JVP
// RUN: %mlax-opt --mlax-autodiff %s | %mlax-run --entry jvp_net_flat --random-inputs 5 | FileCheck %s --check-prefix=JVP

// A nested jit's function (mlax.jit_name) called at three sites is derived once per
// configuration, not walked in place at each call: forward mode writes @layer_jvp (one per set
// of nonzero input tangents), reverse mode splits the
// linearization into @layer_primal (results ++ residuals) and @layer_linear, and transposes the
// linear function once per set of nonzero cotangents (the first call's input has no tangent:
// @layer_primal/@layer_linear, the others: @layer_primal_1/@layer_linear_1). @net_flat is the same program with the
// layer inlined: the numbers are the same.

// GRAD:      result[0]: tensor<3x3xf32> = {{\[\[}}-0.44042093, 0.07910097, 0.52010965], [-0.5251448, 1.72255, -0.6565843], [-0.32921767, 0.36692297, -0.90253097]]
// GRAD-EMPTY:
// JVP:       result[0]: tensor<f32> = -0.08666384
// JVP-NEXT:  result[1]: tensor<f32> = 3.6218581

func.func private @layer(%h: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> tensor<2x3xf32> attributes {mlax.jit_name = "layer"} {
  %0 = "mlax.dot_general"(%h, %w) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %1 = "mlax.tanh"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
func.func private @net(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> tensor<f32> {
  %h1 = func.call @layer(%x, %w) : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %h2 = func.call @layer(%h1, %w) : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %h3 = func.call @layer(%h2, %w) : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %s = "mlax.reduce_sum"(%h3) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func private @net_flat(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> tensor<f32> {
  %d1 = "mlax.dot_general"(%x, %w) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %h1 = "mlax.tanh"(%d1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %d2 = "mlax.dot_general"(%h1, %w) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %h2 = "mlax.tanh"(%d2) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %d3 = "mlax.dot_general"(%h2, %w) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %h3 = "mlax.tanh"(%d3) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = "mlax.reduce_sum"(%h3) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// CHECK-LABEL: func.func private @net_vjp(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<3x3xf32>, %[[CT:.*]]: tensor<f32>)
// CHECK:         %[[P1:.*]]:{{[0-9]+}} = call @layer_primal(%[[X]], %[[W]])
// CHECK-NEXT:    %[[P2:.*]]:{{[0-9]+}} = call @layer_primal_1(%[[P1]]#0, %[[W]])
// CHECK-NEXT:    %[[P3:.*]]:{{[0-9]+}} = call @layer_primal_1(%[[P2]]#0, %[[W]])
// CHECK:         %[[T3:.*]]:2 = call @layer_linear_1_transpose(
// CHECK:         %[[T2:.*]]:2 = call @layer_linear_1_transpose({{.*}}, %[[T3]]#0)
// CHECK:         %[[T1:.*]] = call @layer_linear_transpose({{.*}}, %[[T2]]#0)
// CHECK:         "mlax.add"
// CHECK:         return
// CHECK-NOT:   func.func private @layer_primal_2
// CHECK-LABEL: func.func private @layer_primal(
// CHECK:         "mlax.dot_general"
// CHECK:         "mlax.tanh"
// CHECK-LABEL: func.func private @layer_linear(
// CHECK-SAME:    attributes {mlax.derived = "linear layer 01"
// CHECK-SAME:    mlax.residuals = {{[0-9]+}}
// CHECK-LABEL: func.func private @layer_linear_transpose(
// CHECK-NOT:     "mlax.tanh"
// CHECK:         "mlax.dot_general"
// CHECK:         return
func.func private @net_vjp(tensor<2x3xf32>, tensor<3x3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>) attributes {mlax.vjp = {callee = @net, argnums = array<i64: 1>}}
func.func private @net_flat_vjp(tensor<2x3xf32>, tensor<3x3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>) attributes {mlax.vjp = {callee = @net_flat, argnums = array<i64: 1>}}

// FWD-LABEL: func.func private @net_jvp(
// FWD:         call @layer_jvp(
// FWD-NEXT:    call @layer_jvp(
// FWD-NEXT:    call @layer_jvp(
// FWD-NOT:   func.func private @layer_jvp_1
// FWD-LABEL: func.func private @layer_jvp(
// FWD-SAME:    mlax.derived = "jvp layer 11"
func.func private @net_jvp(tensor<2x3xf32>, tensor<3x3xf32>, tensor<2x3xf32>, tensor<3x3xf32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.jvp = {callee = @net}}
func.func private @net_flat_jvp(tensor<2x3xf32>, tensor<3x3xf32>, tensor<2x3xf32>, tensor<3x3xf32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.jvp = {callee = @net_flat}}

func.func @grad_net(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %r:2 = func.call @net_vjp(%x, %w, %one) : (tensor<2x3xf32>, tensor<3x3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>)
  return %r#1 : tensor<3x3xf32>
}
func.func @grad_net_flat(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %r:2 = func.call @net_flat_vjp(%x, %w, %one) : (tensor<2x3xf32>, tensor<3x3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>)
  return %r#1 : tensor<3x3xf32>
}
func.func @jvp_net(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>, %tx: tensor<2x3xf32>, %tw: tensor<3x3xf32>) -> (tensor<f32>, tensor<f32>) {
  %r:2 = func.call @net_jvp(%x, %w, %tx, %tw) : (tensor<2x3xf32>, tensor<3x3xf32>, tensor<2x3xf32>, tensor<3x3xf32>) -> (tensor<f32>, tensor<f32>)
  return %r#0, %r#1 : tensor<f32>, tensor<f32>
}
func.func @jvp_net_flat(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>, %tx: tensor<2x3xf32>, %tw: tensor<3x3xf32>) -> (tensor<f32>, tensor<f32>) {
  %r:2 = func.call @net_flat_jvp(%x, %w, %tx, %tw) : (tensor<2x3xf32>, tensor<3x3xf32>, tensor<2x3xf32>, tensor<3x3xf32>) -> (tensor<f32>, tensor<f32>)
  return %r#0, %r#1 : tensor<f32>, tensor<f32>
}
