// The StableHLO below is jax 0.10.2's, printed by
//   jax.jit(f).lower(*args).compiler_ir('stablehlo').operation.get_asm(print_generic_op_form=True)
// (no locations) for the `f` and argument types named above each module.
// RUN: %mlax-opt %s --split-input-file --mlax-import-stablehlo | FileCheck %s

// Regions become the body functions of mlax's control-flow declarations; values a region
// uses from outside become consts.

// f = lambda x: lax.fori_loop(0, 4, lambda i, c: c * 2.0 + x, x)
//   on (float32[3])
// A counted loop (i from 0 while i < 4, i += 1) is a scan of 4 steps; x, which the body
// returns unchanged, is a const of the scan, not a carry.
// CHECK-LABEL: func.func @main(
// CHECK:   %[[ZERO:.*]] = "mlax.constant"() {value = dense<0> : tensor<i32>}
// CHECK:   %[[R:.*]]:2 = call @[[SCAN:.*]](%[[ZERO]], %arg0, %arg0)
// CHECK:   return %[[R]]#1
// CHECK:   func.func private @[[BODY:.*]](%{{.*}}: tensor<i32>, %{{.*}}: tensor<3xf32>, %{{.*}}: tensor<3xf32>) -> (tensor<i32>, tensor<3xf32>)
// CHECK:     "mlax.mul"
// CHECK:     "mlax.add"
// CHECK:   func.func private @[[SCAN]]({{.*}} attributes {mlax.scan = {body = @[[BODY]], length = 4 : i64, num_carry = 2 : i64, num_consts = 1 : i64, reverse = false}}
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3xf32>) -> tensor<3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg2: tensor<3xf32>):
    %4 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %5:3 = "stablehlo.while"(%arg2, %4, %arg2) ({
    ^bb0(%arg6: tensor<3xf32>, %arg7: tensor<i32>, %arg8: tensor<3xf32>):
      %9 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
      %10 = "stablehlo.compare"(%arg7, %9) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%10) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg3: tensor<3xf32>, %arg4: tensor<i32>, %arg5: tensor<3xf32>):
      %6 = "func.call"(%arg3, %arg5) <{callee = @closed_call}> : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      %7 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %8 = "stablehlo.add"(%arg4, %7) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%arg3, %8, %6) : (tensor<3xf32>, tensor<i32>, tensor<3xf32>) -> ()
    }) : (tensor<3xf32>, tensor<i32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>, tensor<3xf32>)
    "func.return"(%5#2) : (tensor<3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>, res_attrs = [{}], sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>):
    %0 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
    %2 = "stablehlo.multiply"(%arg1, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %3 = "stablehlo.add"(%2, %arg0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%3) : (tensor<3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = lambda x: lax.while_loop(lambda c: jnp.sum(c) < 10.0, lambda c: c * 2.0 + 1.0, x)
//   on (float32[3])
// Any other loop is a while loop.
// CHECK-LABEL: func.func @main(
// CHECK:   call @[[WHILE:.*]](%arg0) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK:   func.func private @[[COND:.*]](%{{.*}}: tensor<3xf32>) -> tensor<i1>
// CHECK:     "mlax.reduce_sum"
// CHECK:     "mlax.compare"({{.*}}) {comparison_direction = "LT"}
// CHECK:   func.func private @[[BODY:.*]](%{{.*}}: tensor<3xf32>) -> tensor<3xf32>
// CHECK:   func.func private @[[WHILE]]({{.*}} attributes {mlax.while = {body = @[[BODY]], cond = @[[COND]]}}
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3xf32>) -> tensor<3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3xf32>):
    %0 = "stablehlo.while"(%arg0) ({
    ^bb0(%arg2: tensor<3xf32>):
      %7 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %8 = "stablehlo.reduce"(%arg2, %7) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
        %11 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%11) : (tensor<f32>) -> ()
      }) : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
      %9 = "stablehlo.constant"() <{value = dense<1.000000e+01> : tensor<f32>}> : () -> tensor<f32>
      %10 = "stablehlo.compare"(%8, %9) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%10) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg1: tensor<3xf32>):
      %1 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
      %3 = "stablehlo.multiply"(%arg1, %2) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      %4 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
      %6 = "stablehlo.add"(%3, %5) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      "stablehlo.return"(%6) : (tensor<3xf32>) -> ()
    }) : (tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%0) : (tensor<3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = lambda p, x: lax.cond(p > 0, lambda x: jnp.sin(x), lambda x: jnp.cos(x), x)
//   on (float32[], float32[3])
// jax's lax.cond (a case on a converted bool) is a cond on the bool itself.
// CHECK-LABEL: func.func @main(
// CHECK:   %[[P:.*]] = "mlax.compare"(%arg0, %{{.*}}) {comparison_direction = "GT"}
// CHECK:   call @[[COND:.*]](%[[P]], %arg1) : (tensor<i1>, tensor<3xf32>) -> tensor<3xf32>
// CHECK:   func.func private @[[FALSE:.*]](%{{.*}}: tensor<3xf32>)
// CHECK-NEXT:  "mlax.cos"
// CHECK:   func.func private @[[TRUE:.*]](%{{.*}}: tensor<3xf32>)
// CHECK-NEXT:  "mlax.sin"
// CHECK:   func.func private @[[COND]]({{.*}} attributes {mlax.cond = {branches = [@[[FALSE]], @[[TRUE]]]}}
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<f32>, %arg1: tensor<3xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.compare"(%arg0, %0) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %2 = "stablehlo.convert"(%1) : (tensor<i1>) -> tensor<i32>
    %3 = "stablehlo.case"(%2) ({
      %5 = "stablehlo.cosine"(%arg1) : (tensor<3xf32>) -> tensor<3xf32>
      "stablehlo.return"(%5) : (tensor<3xf32>) -> ()
    }, {
      %4 = "stablehlo.sine"(%arg1) : (tensor<3xf32>) -> tensor<3xf32>
      "stablehlo.return"(%4) : (tensor<3xf32>) -> ()
    }) : (tensor<i32>) -> tensor<3xf32>
    "func.return"(%3) : (tensor<3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x)
//   on (int32[], float32[3])
// CHECK-LABEL: func.func @main(
// CHECK:   "mlax.clamp"
// CHECK:   call @[[SWITCH:.*]](%{{.*}}, %arg1) : (tensor<i32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK:   func.func private @[[SWITCH]]({{.*}} attributes {mlax.cond = {branches = [@{{.*}}, @{{.*}}, @{{.*}}]}}
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<i32>, tensor<3xf32>) -> tensor<3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<i32>, %arg1: tensor<3xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.constant"() <{value = dense<2> : tensor<i32>}> : () -> tensor<i32>
    %2 = "stablehlo.clamp"(%0, %arg0, %1) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %3 = "stablehlo.case"(%2) ({
      %6 = "stablehlo.sine"(%arg1) : (tensor<3xf32>) -> tensor<3xf32>
      "stablehlo.return"(%6) : (tensor<3xf32>) -> ()
    }, {
      %5 = "stablehlo.cosine"(%arg1) : (tensor<3xf32>) -> tensor<3xf32>
      "stablehlo.return"(%5) : (tensor<3xf32>) -> ()
    }, {
      %4 = "stablehlo.tanh"(%arg1) : (tensor<3xf32>) -> tensor<3xf32>
      "stablehlo.return"(%4) : (tensor<3xf32>) -> ()
    }) : (tensor<i32>) -> tensor<3xf32>
    "func.return"(%3) : (tensor<3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
