// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s
// RUN: %mlax-opt --mlax-autodiff %s | %mlax-run --entry grad_split --random-inputs 3 | FileCheck %s --check-prefix=GRAD
// RUN: %mlax-opt --mlax-autodiff %s | %mlax-run --entry grad_remat --random-inputs 3 | FileCheck %s --check-prefix=GRAD

// Reverse mode through a scan keeps the residuals jax's partial evaluation keeps. The body's
// linearization is split once into @step_primal (step inputs -> step outputs ++ residuals) and
// @step_linear (residuals ++ tangents -> tangent outputs). The forward scan (@step_forward)
// stacks the residuals that change per step; the const %w is passed as it is, and w*w, which
// reads only consts, is computed once before the loops (@step_invariants). The backward scan
// runs the transpose of the linear body step by step, nothing of the forward pass again.
// With the body under a checkpoint (@grad_remat), the backward scan recomputes each step
// from the stacked carries instead; the gradients are the same.

// GRAD:      result[0]: tensor<3x3xf32> = {{\[\[}}0.21390915, 0.06719824, 0.043721303], [-4.314539, -1.716206, -2.292643], [0.6554731, -0.233976, -3.1169622]]
// GRAD-NEXT: result[1]: tensor<5x3xf32> = {{\[\[}}1.5246784e-05, 1.1258885, 0.92874366], [2.1634707e-05, 1.3886306, 0.005484438], [0.052385073, 0.6835175, 0.0004462312], [1.5347553e-07, 1.0800053, 0.0002772669], [1.4305112e-06, 0.8744392, 0.0013611384]]
// GRAD-NEXT: result[2]: tensor<3xf32> = [4.1526012, 0.280744, 0.74758804]
// GRAD-EMPTY:

// CHECK-LABEL: func.func private @f_vjp(
// CHECK-SAME:    %[[W:.*]]: tensor<3x3xf32>, %[[XS:.*]]: tensor<5x3xf32>, %[[C0:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<f32>)
// CHECK:         %[[FWD:.*]]:4 = call @step_forward_scan(%[[C0]], %[[XS]], %[[W]])
// CHECK-SAME:      -> (tensor<3xf32>, tensor<5xf32>, tensor<5x3xf32>, tensor<5x3xf32>)
// CHECK:         %[[INV:.*]] = call @step_invariants(%[[W]]) : (tensor<3x3xf32>) -> tensor<3x3xf32>
// CHECK:         call @step_tangent_transpose_scan(%{{.*}}, %{{.*}}, %[[FWD]]#2, %[[FWD]]#3, %{{.*}}, %[[W]], %[[INV]])
// Under a checkpoint the body is recomputed: the forward scan stacks only the carries.
// CHECK-LABEL: func.func private @f_remat_vjp(
// CHECK:         call @step_remat_residuals_scan(
// CHECK-SAME:      -> (tensor<3xf32>, tensor<5xf32>, tensor<5x3xf32>)
// The forward body: the step's outputs and its per-step residuals (the carry entering the
// step and tanh's derivative are stacked).
// CHECK-LABEL: func.func private @step_forward(
// CHECK:         call @step_primal(
// CHECK:       func.func private @step_forward_scan({{.*}}) attributes {mlax.scan = {body = @step_forward, length = 5 : i64, num_carry = 1 : i64, num_consts = 1 : i64, reverse = false}}
// CHECK-LABEL: func.func private @step_invariants(
// CHECK-SAME:    %[[IW:.*]]: tensor<3x3xf32>) -> tensor<3x3xf32>
// CHECK-NEXT:    %[[WW:.*]] = "mlax.mul"(%[[IW]], %[[IW]])
// CHECK-NEXT:    return %[[WW]]
// CHECK-LABEL: func.func private @step_tangent(
// CHECK-SAME:    attributes {mlax.linear_body}
// CHECK-NEXT:    call @step_linear(
// The backward body calls the linear body's transpose: no jvp, no primal op of the step.
// CHECK-LABEL: func.func private @step_linear_transpose(
// CHECK-NOT:     "mlax.tanh"
// CHECK:         return
// CHECK:       func.func private @step_tangent_transpose_scan({{.*}}) attributes {mlax.scan = {body = @step_tangent_transpose_1, length = 5 : i64, num_carry = 2 : i64, num_consts = 2 : i64, reverse = true}}


func.func private @step(%c: tensor<3xf32>, %x: tensor<3xf32>, %w: tensor<3x3xf32>) -> (tensor<3xf32>, tensor<f32>) {
  %ww = "mlax.mul"(%w, %w) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %d = "mlax.dot_general"(%ww, %c) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<3x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %s = "mlax.add"(%d, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %h = "mlax.tanh"(%s) : (tensor<3xf32>) -> tensor<3xf32>
  %y = "mlax.reduce_sum"(%h) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %h, %y : tensor<3xf32>, tensor<f32>
}
func.func private @step_scan(tensor<3xf32>, tensor<5x3xf32>, tensor<3x3xf32>) -> (tensor<3xf32>, tensor<5xf32>) attributes {mlax.scan = {body = @step, length = 5 : i64, reverse = false, num_carry = 1 : i64, num_consts = 1 : i64}}
func.func private @f(%w: tensor<3x3xf32>, %xs: tensor<5x3xf32>, %c0: tensor<3xf32>) -> tensor<f32> {
  %r:2 = func.call @step_scan(%c0, %xs, %w) : (tensor<3xf32>, tensor<5x3xf32>, tensor<3x3xf32>) -> (tensor<3xf32>, tensor<5xf32>)
  %a = "mlax.reduce_sum"(%r#0) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  %b = "mlax.reduce_sum"(%r#1) {dimensions = array<i64: 0>} : (tensor<5xf32>) -> tensor<f32>
  %s = "mlax.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func private @f_vjp(tensor<3x3xf32>, tensor<5x3xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>, tensor<5x3xf32>, tensor<3xf32>) attributes {mlax.vjp = {callee = @f, argnums = array<i64: 0, 1, 2>}}

func.func private @step_checkpoint(tensor<3xf32>, tensor<3xf32>, tensor<3x3xf32>) -> (tensor<3xf32>, tensor<f32>) attributes {mlax.checkpoint = {callee = @step, policy = "nothing_saveable", prevent_cse = true}}
func.func private @step_remat(%c: tensor<3xf32>, %x: tensor<3xf32>, %w: tensor<3x3xf32>) -> (tensor<3xf32>, tensor<f32>) {
  %r:2 = func.call @step_checkpoint(%c, %x, %w) : (tensor<3xf32>, tensor<3xf32>, tensor<3x3xf32>) -> (tensor<3xf32>, tensor<f32>)
  return %r#0, %r#1 : tensor<3xf32>, tensor<f32>
}
func.func private @step_remat_scan(tensor<3xf32>, tensor<5x3xf32>, tensor<3x3xf32>) -> (tensor<3xf32>, tensor<5xf32>) attributes {mlax.scan = {body = @step_remat, length = 5 : i64, reverse = false, num_carry = 1 : i64, num_consts = 1 : i64}}
func.func private @f_remat(%w: tensor<3x3xf32>, %xs: tensor<5x3xf32>, %c0: tensor<3xf32>) -> tensor<f32> {
  %r:2 = func.call @step_remat_scan(%c0, %xs, %w) : (tensor<3xf32>, tensor<5x3xf32>, tensor<3x3xf32>) -> (tensor<3xf32>, tensor<5xf32>)
  %a = "mlax.reduce_sum"(%r#0) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  %b = "mlax.reduce_sum"(%r#1) {dimensions = array<i64: 0>} : (tensor<5xf32>) -> tensor<f32>
  %s = "mlax.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func private @f_remat_vjp(tensor<3x3xf32>, tensor<5x3xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>, tensor<5x3xf32>, tensor<3xf32>) attributes {mlax.vjp = {callee = @f_remat, argnums = array<i64: 0, 1, 2>}}

func.func @grad_split(%w: tensor<3x3xf32>, %xs: tensor<5x3xf32>, %c0: tensor<3xf32>) -> (tensor<3x3xf32>, tensor<5x3xf32>, tensor<3xf32>) {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %r:4 = func.call @f_vjp(%w, %xs, %c0, %one) : (tensor<3x3xf32>, tensor<5x3xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>, tensor<5x3xf32>, tensor<3xf32>)
  return %r#1, %r#2, %r#3 : tensor<3x3xf32>, tensor<5x3xf32>, tensor<3xf32>
}
func.func @grad_remat(%w: tensor<3x3xf32>, %xs: tensor<5x3xf32>, %c0: tensor<3xf32>) -> (tensor<3x3xf32>, tensor<5x3xf32>, tensor<3xf32>) {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %r:4 = func.call @f_remat_vjp(%w, %xs, %c0, %one) : (tensor<3x3xf32>, tensor<5x3xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>, tensor<5x3xf32>, tensor<3xf32>)
  return %r#1, %r#2, %r#3 : tensor<3x3xf32>, tensor<5x3xf32>, tensor<3xf32>
}
