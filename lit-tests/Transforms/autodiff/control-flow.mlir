// RUN: %mlax-opt --mlax-autodiff %s --split-input-file --verify-diagnostics | FileCheck %s

// Forward mode through a cond: one cond over the branches' JVPs, on (operands, tangents),
// giving (outputs, output tangents) (the selector's tangent is ignored).
// CHECK-LABEL: func.func private @f_jvp(%arg0: tensor<i1>, %arg1: tensor<3xf32>, %arg2: tensor<i1>, %arg3: tensor<3xf32>)
// CHECK:         %[[R:.*]]:2 = call @sine_jvp_cond(%arg0, %arg1, %arg3)
// CHECK:         return %[[R]]#0, %[[R]]#1
// CHECK:       func.func private @sine_jvp_cond(tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.cond = {branches = [@sine_jvp, @double_jvp]}}
func.func private @sine(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @double(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.add"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @branches_cond(tensor<i1>, tensor<3xf32>) -> tensor<3xf32> attributes {mlax.cond = {branches = [@sine, @double]}}
func.func @f(%p: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @branches_cond(%p, %x) : (tensor<i1>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @f_jvp(tensor<i1>, tensor<3xf32>, tensor<i1>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.jvp = {callee = @f}}

// -----

// Reverse mode through a scan: the forward scan (@step_forward) also stacks the residuals the
// body's linear part reads per step (the carry entering the step and tanh's derivative); the
// const %w is passed as it is; the cotangents come from a scan in the opposite direction
// whose body calls the transpose of the linear body; the const's cotangent is summed in its
// carry (scan-residuals.mlir has more).
// CHECK-LABEL: func.func private @f_vjp(%arg0: tensor<f32>, %arg1: tensor<4xf32>, %arg2: tensor<f32>)
// CHECK:         %[[FWD:.*]]:3 = call @step_forward_scan(%{{.*}}, %arg1, %arg0) : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>)
// CHECK:         %[[BWD:.*]]:2 = call @step_tangent_transpose_scan(%arg2, %{{.*}}, %[[FWD]]#1, %[[FWD]]#2, %arg0)
// CHECK:         return %[[FWD]]#0, %[[BWD]]#1
// CHECK-LABEL: func.func private @step_forward(%arg0: tensor<f32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>)
// CHECK:         %[[S:.*]]:4 = call @step_primal(%arg0, %arg1, %arg2)
// CHECK:         return %[[S]]#0, %[[S]]#2, %[[S]]#3
// CHECK:       func.func private @step_forward_scan({{.*}}) -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>) attributes {mlax.scan = {body = @step_forward, length = 4 : i64, num_carry = 1 : i64, num_consts = 1 : i64, reverse = false}}
// CHECK-LABEL: func.func private @step_tangent_transpose_1(
// CHECK:         call @step_tangent_transpose(
// CHECK:         "mlax.add"
// CHECK:       func.func private @step_tangent_transpose_scan({{.*}}) attributes {mlax.scan = {body = @step_tangent_transpose_1, length = 4 : i64, num_carry = 2 : i64, num_consts = 1 : i64, reverse = true}}
func.func private @step(%c: tensor<f32>, %x: tensor<f32>, %w: tensor<f32>) -> tensor<f32> {
  %0 = "mlax.mul"(%c, %w) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %1 = "mlax.add"(%0, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %2 = "mlax.tanh"(%1) : (tensor<f32>) -> tensor<f32>
  return %2 : tensor<f32>
}
func.func private @step_scan(tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<f32> attributes {mlax.scan = {body = @step, length = 4 : i64, reverse = false, num_carry = 1 : i64, num_consts = 1 : i64}}
func.func @f(%w: tensor<f32>, %xs: tensor<4xf32>) -> tensor<f32> {
  %zero = "mlax.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %0 = func.call @step_scan(%zero, %xs, %w) : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @f_vjp(tensor<f32>, tensor<4xf32>, tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.vjp = {callee = @f, argnums = array<i64: 0>}}

// -----

// Forward mode through a while loop carries (value, tangent) pairs: the loop's cond ignores
// the tangents, its body is the body's JVP; the one loop gives outputs and tangents.
// CHECK-LABEL: func.func private @f_jvp(%arg0: tensor<f32>, %arg1: tensor<f32>)
// CHECK:         %[[T:.*]]:2 = call @body_tangent_while(%arg0, %arg1)
// CHECK:         return %[[T]]#0, %[[T]]#1
// CHECK-LABEL: func.func private @small_tangent(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<i1>
// CHECK:         call @small(%arg0)
// CHECK:       attributes {mlax.while = {body = @body_tangent, cond = @small_tangent}}
func.func private @small(%x: tensor<f32>) -> tensor<i1> {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %0 = "mlax.compare"(%x, %one) {comparison_direction = "LT"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func private @body(%x: tensor<f32>) -> tensor<f32> {
  %0 = "mlax.exp"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @body_while(tensor<f32>) -> tensor<f32> attributes {mlax.while = {cond = @small, body = @body}}
func.func @f(%x: tensor<f32>) -> tensor<f32> {
  %0 = func.call @body_while(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @f_jvp(tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.jvp = {callee = @f}}

// -----

// Reverse mode through a while loop is an error (its trip count is not known ahead), as in JAX.
func.func private @small(%x: tensor<f32>) -> tensor<i1> {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %0 = "mlax.compare"(%x, %one) {comparison_direction = "LT"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func private @body(%x: tensor<f32>) -> tensor<f32> {
  %0 = "mlax.exp"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @body_while(tensor<f32>) -> tensor<f32> attributes {mlax.while = {cond = @small, body = @body}}
func.func @f(%x: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{Reverse-mode differentiation does not work for lax.while_loop}}
  %0 = func.call @body_while(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @f_vjp(tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.vjp = {callee = @f, argnums = array<i64: 0>}}

// -----

// Reverse mode through a cond: the transposed cond runs, on the taken branch, the vjp of that
// branch's tangent map with respect to its linear operand (the known operand x is passed).
// CHECK-LABEL: func.func private @f_vjp(%arg0: tensor<i1>, %arg1: tensor<3xf32>, %arg2: tensor<3xf32>)
// CHECK:         %[[Y:.*]] = call @branches_cond(%arg0, %arg1)
// CHECK:         %[[CT:.*]] = call @sine_tangent_transpose_cond(%arg0, %arg1, %arg2)
// CHECK:         return %[[Y]], %[[CT]]
// CHECK-LABEL: func.func private @sine_tangent_transpose(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> tensor<3xf32>
// CHECK:         %[[V:.*]]:2 = call @sine_tangent_vjp(%arg0, %{{.*}}, %arg1)
// CHECK:         return %[[V]]#1
// CHECK:       attributes {mlax.cond = {branches = [@sine_tangent_transpose, @double_tangent_transpose]}}
func.func private @sine(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @double(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.add"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @branches_cond(tensor<i1>, tensor<3xf32>) -> tensor<3xf32> attributes {mlax.cond = {branches = [@sine, @double]}}
func.func @f(%p: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @branches_cond(%p, %x) : (tensor<i1>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @f_vjp(tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.vjp = {callee = @f, argnums = array<i64: 1>}}

// -----

// Forward mode through a scan: one scan carrying (carry, carry tangent) over (xs, xs tangents)
// with (consts, const tangents) as consts; its step calls the body's JVP with the operands
// reordered, and the direction is kept.
// CHECK-LABEL: func.func private @f_jvp(%arg0: tensor<f32>, %arg1: tensor<4xf32>, %arg2: tensor<f32>, %arg3: tensor<4xf32>)
// CHECK:         %[[R:.*]]:2 = call @step_jvp_scan(%{{.*}}, %{{.*}}, %arg1, %arg3, %arg0, %arg2)
// CHECK:         return %[[R]]#0, %[[R]]#1
// CHECK-LABEL: func.func private @step_jvp_step(%arg0: tensor<f32>, %arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<f32>, %arg4: tensor<f32>, %arg5: tensor<f32>) -> (tensor<f32>, tensor<f32>)
// CHECK:         %[[J:.*]]:2 = call @step_jvp(%arg0, %arg2, %arg4, %arg1, %arg3, %arg5)
// CHECK:         return %[[J]]#0, %[[J]]#1
// CHECK:       attributes {mlax.scan = {body = @step_jvp_step, length = 4 : i64, num_carry = 2 : i64, num_consts = 2 : i64, reverse = true}}
func.func private @step(%c: tensor<f32>, %x: tensor<f32>, %w: tensor<f32>) -> tensor<f32> {
  %0 = "mlax.mul"(%c, %w) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %1 = "mlax.add"(%0, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @step_scan(tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<f32> attributes {mlax.scan = {body = @step, length = 4 : i64, reverse = true, num_carry = 1 : i64, num_consts = 1 : i64}}
func.func @f(%w: tensor<f32>, %xs: tensor<4xf32>) -> tensor<f32> {
  %zero = "mlax.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %0 = func.call @step_scan(%zero, %xs, %w) : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @f_jvp(tensor<f32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.jvp = {callee = @f}}
