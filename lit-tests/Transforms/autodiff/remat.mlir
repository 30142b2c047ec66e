// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s
// RUN: %mlax-opt --mlax-autodiff %s | %mlax-run --entry grad_plain --random-inputs 3 | FileCheck %s --check-prefix=GRAD
// RUN: %mlax-opt --mlax-autodiff %s | %mlax-run --entry grad_remat --random-inputs 3 | FileCheck %s --check-prefix=GRAD
// RUN: %mlax-opt --mlax-autodiff %s | %mlax-run --entry grad_dots --random-inputs 3 | FileCheck %s --check-prefix=GRAD
// RUN: %mlax-opt --mlax-autodiff %s | %mlax-run --entry grad_remat --random-inputs 3 --backend cpu | FileCheck %s --check-prefix=CPU

// Rematerialization: reverse mode through a call of an mlax.checkpoint declaration keeps the
// checkpoint's inputs (and what its policy marked mlax.saveable) and recomputes the rest in
// the backward part, reading the kept values through optimization barriers (prevent_cse).
// Recomputing ops are marked mlax.recomputed. The gradients are the same with and without
// checkpoints (exactly, on the interpreter; the CPU backend's tanh is a polynomial).

// GRAD:     result[0]: tensor<3x3xf32> = {{\[\[}}0.09280503, -0.5264452, -0.22599918], [0.20477438, -2.6105163, 0.8900824], [0.067135036, -0.03700112, 0.5585713]]
// GRAD-EMPTY:
// CPU:      result[0]: tensor<3x3xf32> = {{\[\[}}0.092804{{[0-9]*}}, -0.52644{{[0-9]*}}, -0.225999{{[0-9]*}}], [0.204774{{[0-9]*}}, -2.61051{{[0-9]*}}, 0.890082{{[0-9]*}}], [0.06713{{[0-9]*}}, -0.0370{{[0-9]*}}, 0.558571{{[0-9]*}}]]

func.func private @layer(%h: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> tensor<2x3xf32> {
  %0 = "mlax.dot_general"(%h, %w) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %1 = "mlax.tanh"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
// The same layer as the dots_saveable policy marks it.
func.func private @layer_dots(%h: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> tensor<2x3xf32> {
  %0 = "mlax.dot_general"(%h, %w) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, mlax.saveable, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %1 = "mlax.tanh"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
func.func private @layer_remat(tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32> attributes {mlax.checkpoint = {callee = @layer, policy = "nothing_saveable", prevent_cse = true}}
func.func private @layer_dots_remat(tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32> attributes {mlax.checkpoint = {callee = @layer_dots, policy = "dots_saveable", prevent_cse = true}}
func.func private @layer_no_cse(tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32> attributes {mlax.checkpoint = {callee = @layer, policy = "nothing_saveable", prevent_cse = false}}
func.func private @layer_everything(tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32> attributes {mlax.checkpoint = {callee = @layer_dots, policy = "everything_saveable", prevent_cse = true}}

// Two layers, each checkpointed: the backward part recomputes the second layer from its
// kept input (the first layer's output), then the first from the argument.
// CHECK-LABEL: func.func private @test_remat_vjp(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<3x3xf32>, %[[CT:.*]]: tensor<f32>)
// CHECK:         %[[D1:.*]] = "mlax.dot_general"(%[[X]], %[[W]])
// CHECK-NEXT:    %[[H1:.*]] = "mlax.tanh"(%[[D1]])
// CHECK:         %[[D2:.*]] = "mlax.dot_general"(%[[H1]], %[[W]])
// CHECK-NEXT:    %[[H2:.*]] = "mlax.tanh"(%[[D2]])
// CHECK:         "mlax.reduce_sum"(%[[H2]])
// CHECK:         %[[BH1:.*]] = "mlax.optimization_barrier"(%[[H1]]) {mlax.recomputed}
// CHECK-NEXT:    %[[BW:.*]] = "mlax.optimization_barrier"(%[[W]]) {mlax.recomputed}
// CHECK-NEXT:    %[[RD2:.*]] = "mlax.dot_general"(%[[BH1]], %[[BW]]) {{{.*}}mlax.recomputed
// CHECK-NEXT:    %[[RH2:.*]] = "mlax.tanh"(%[[RD2]]) {mlax.recomputed}
// CHECK:         "mlax.sub"(%{{.*}}, %[[RH2]])
// CHECK:         %[[BX:.*]] = "mlax.optimization_barrier"(%[[X]]) {mlax.recomputed}
// CHECK-NEXT:    %[[RD1:.*]] = "mlax.dot_general"(%[[BX]], %[[BW]]) {{{.*}}mlax.recomputed
// CHECK-NEXT:    %[[RH1:.*]] = "mlax.tanh"(%[[RD1]]) {mlax.recomputed}
// CHECK:         "mlax.sub"(%{{.*}}, %[[RH1]])
// CHECK:         return
func.func private @test_remat(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> tensor<f32> {
  %h1 = func.call @layer_remat(%x, %w) : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %h2 = func.call @layer_remat(%h1, %w) : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %s = "mlax.reduce_sum"(%h2) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func private @test_remat_vjp(tensor<2x3xf32>, tensor<3x3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>) attributes {mlax.vjp = {callee = @test_remat, argnums = array<i64: 1>}}

// dots_saveable: the product is kept, only tanh is recomputed (from the barrier'd product).
// CHECK-LABEL: func.func private @test_remat_dots_vjp(
// CHECK:         %[[D:.*]] = "mlax.dot_general"
// CHECK-NOT:     mlax.saveable
// CHECK:         %[[BD:.*]] = "mlax.optimization_barrier"(%[[D]]) {mlax.recomputed}
// CHECK-NEXT:    "mlax.tanh"(%[[BD]]) {mlax.recomputed}
// CHECK-NOT:     "mlax.dot_general"({{.*}}mlax.recomputed
// CHECK:         return
func.func private @test_remat_dots(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> tensor<f32> {
  %h = func.call @layer_dots_remat(%x, %w) : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %s = "mlax.reduce_sum"(%h) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func private @test_remat_dots_vjp(tensor<2x3xf32>, tensor<3x3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>) attributes {mlax.vjp = {callee = @test_remat_dots, argnums = array<i64: 1>}}

// prevent_cse = false: the recomputation reads the kept values themselves.
// CHECK-LABEL: func.func private @test_remat_no_cse_vjp(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<3x3xf32>, %[[CT:.*]]: tensor<f32>)
// CHECK-NOT:     "mlax.optimization_barrier"
// CHECK:         "mlax.dot_general"(%[[X]], %[[W]]) {{{.*}}mlax.recomputed
// CHECK-NOT:     "mlax.optimization_barrier"
// CHECK:         return
func.func private @test_remat_no_cse(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> tensor<f32> {
  %h = func.call @layer_no_cse(%x, %w) : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %s = "mlax.reduce_sum"(%h) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func private @test_remat_no_cse_vjp(tensor<2x3xf32>, tensor<3x3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>) attributes {mlax.vjp = {callee = @test_remat_no_cse, argnums = array<i64: 1>}}

// everything_saveable is as if there were no checkpoint: nothing is recomputed.
// CHECK-LABEL: func.func private @test_no_remat_everything_saveable_vjp(
// CHECK-NOT:     mlax.recomputed
// CHECK-NOT:     mlax.optimization_barrier
// CHECK:         return
func.func private @test_no_remat_everything_saveable(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> tensor<f32> {
  %h = func.call @layer_everything(%x, %w) : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %s = "mlax.reduce_sum"(%h) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func private @test_no_remat_everything_saveable_vjp(tensor<2x3xf32>, tensor<3x3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>) attributes {mlax.vjp = {callee = @test_no_remat_everything_saveable, argnums = array<i64: 1>}}

// The entries mlax-run runs: the same two-layer gradient without and with checkpoints.
func.func private @test_plain(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> tensor<f32> {
  %h1 = func.call @layer(%x, %w) : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %h2 = func.call @layer(%h1, %w) : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %s = "mlax.reduce_sum"(%h2) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func private @test_plain_vjp(tensor<2x3xf32>, tensor<3x3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>) attributes {mlax.vjp = {callee = @test_plain, argnums = array<i64: 1>}}
func.func private @test_two_dots(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> tensor<f32> {
  %h1 = func.call @layer_dots_remat(%x, %w) : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %h2 = func.call @layer_dots_remat(%h1, %w) : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %s = "mlax.reduce_sum"(%h2) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func private @test_two_dots_vjp(tensor<2x3xf32>, tensor<3x3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>) attributes {mlax.vjp = {callee = @test_two_dots, argnums = array<i64: 1>}}
func.func @grad_plain(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %r:2 = func.call @test_plain_vjp(%x, %w, %one) : (tensor<2x3xf32>, tensor<3x3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>)
  return %r#1 : tensor<3x3xf32>
}
func.func @grad_remat(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %r:2 = func.call @test_remat_vjp(%x, %w, %one) : (tensor<2x3xf32>, tensor<3x3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>)
  return %r#1 : tensor<3x3xf32>
}
func.func @grad_dots(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %r:2 = func.call @test_two_dots_vjp(%x, %w, %one) : (tensor<2x3xf32>, tensor<3x3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3x3xf32>)
  return %r#1 : tensor<3x3xf32>
}
