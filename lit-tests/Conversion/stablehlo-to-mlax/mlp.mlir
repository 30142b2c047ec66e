// The StableHLO below is jax 0.10.2's, printed by
//   jax.jit(f).lower(*args).compiler_ir('stablehlo').operation.get_asm(print_generic_op_form=True)
// (no locations) for the `f` and argument types named above each module.
// RUN: %mlax-opt %s --mlax-import-stablehlo | FileCheck %s
// RUN: %mlax-opt %s --mlax-import-stablehlo --mlax-lower-to-linalg | FileCheck %s --check-prefix=LINALG

// f = lambda w1, b1, w2, b2, x, y: jnp.mean((jnp.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2)
//   on (float32[3, 4], float32[4], float32[4, 2], float32[2], float32[5, 3], float32[5, 2])
// The loss of a 2-layer MLP: afterwards it is mlax IR that mlax's passes take.
// CHECK-LABEL: func.func @main(%arg0: tensor<3x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4x2xf32>, %arg3: tensor<2xf32>, %arg4: tensor<5x3xf32>, %arg5: tensor<5x2xf32>) -> tensor<f32>
// CHECK:   %[[H:.*]] = "mlax.dot_general"(%arg4, %arg0)
// CHECK:   "mlax.tanh"
// CHECK:   "mlax.dot_general"
// CHECK:   %[[E:.*]] = "mlax.sub"
// CHECK:   %[[SQ:.*]] = "mlax.mul"(%[[E]], %[[E]])
// CHECK:   %[[SUM:.*]] = "mlax.reduce_sum"(%[[SQ]]) {dimensions = array<i64: 0, 1>}
// CHECK:   %[[N:.*]] = "mlax.constant"() {value = dense<1.000000e+01> : tensor<f32>}
// CHECK:   %[[L:.*]] = "mlax.div"(%[[SUM]], %[[N]])
// CHECK:   return %[[L]] : tensor<f32>
// CHECK-NOT: stablehlo
// LINALG-LABEL: func.func @main(
// LINALG:   linalg.matmul
// LINALG:   math.tanh
// LINALG-NOT: mlax.
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}, {}, {}], function_type = (tensor<3x4xf32>, tensor<4xf32>, tensor<4x2xf32>, tensor<2xf32>, tensor<5x3xf32>, tensor<5x2xf32>) -> tensor<f32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4x2xf32>, %arg3: tensor<2xf32>, %arg4: tensor<5x3xf32>, %arg5: tensor<5x2xf32>):
    %0 = "stablehlo.dot_general"(%arg4, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<5x3xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<1x4xf32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x4xf32>) -> tensor<5x4xf32>
    %3 = "stablehlo.add"(%0, %2) : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<5x4xf32>
    %4 = "stablehlo.tanh"(%3) : (tensor<5x4xf32>) -> tensor<5x4xf32>
    %5 = "stablehlo.dot_general"(%4, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<5x4xf32>, tensor<4x2xf32>) -> tensor<5x2xf32>
    %6 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64: 1>}> : (tensor<2xf32>) -> tensor<1x2xf32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x2xf32>) -> tensor<5x2xf32>
    %8 = "stablehlo.add"(%5, %7) : (tensor<5x2xf32>, tensor<5x2xf32>) -> tensor<5x2xf32>
    %9 = "stablehlo.subtract"(%8, %arg5) : (tensor<5x2xf32>, tensor<5x2xf32>) -> tensor<5x2xf32>
    %10 = "stablehlo.multiply"(%9, %9) : (tensor<5x2xf32>, tensor<5x2xf32>) -> tensor<5x2xf32>
    %11 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %12 = "stablehlo.reduce"(%10, %11) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
      %15 = "stablehlo.add"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%15) : (tensor<f32>) -> ()
    }) : (tensor<5x2xf32>, tensor<f32>) -> tensor<f32>
    %13 = "stablehlo.constant"() <{value = dense<1.000000e+01> : tensor<f32>}> : () -> tensor<f32>
    %14 = "stablehlo.divide"(%12, %13) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%14) : (tensor<f32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
