// The StableHLO below is jax 0.10.2's, printed by
//   jax.jit(f).lower(*args).compiler_ir('stablehlo').operation.get_asm(print_generic_op_form=True)
// (no locations) for the `f` and argument types named above each module.
// RUN: %mlax-opt %s --split-input-file --mlax-import-stablehlo | FileCheck %s
// RUN: %mlax-opt %s --split-input-file --mlax-import-stablehlo | %mlax-opt --split-input-file > /dev/null

// f = lambda x, y: jnp.where(x > y, jnp.exp(x) - y, jnp.clip(y, 0.0, 1.0))
//   on (float32[3], float32[3])
// CHECK-LABEL: func.func @main(
// CHECK:   %[[GT:.*]] = "mlax.compare"(%arg0, %arg1) {comparison_direction = "GT"}
// CHECK:   %[[E:.*]] = "mlax.exp"(%arg0)
// CHECK:   %[[D:.*]] = "mlax.sub"(%[[E]], %arg1)
// CHECK:   "mlax.max"
// CHECK:   %[[C:.*]] = "mlax.min"
// CHECK:   %[[R:.*]] = "mlax.select"(%[[GT]], %[[D]], %[[C]])
// CHECK:   return %[[R]]
// CHECK-NOT: stablehlo
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg6: tensor<3xf32>, %arg7: tensor<3xf32>):
    %7 = "stablehlo.compare"(%arg6, %arg7) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %8 = "stablehlo.exponential"(%arg6) : (tensor<3xf32>) -> tensor<3xf32>
    %9 = "stablehlo.subtract"(%8, %arg7) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %10 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %11 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %12 = "func.call"(%arg7, %10, %11) <{callee = @clip}> : (tensor<3xf32>, tensor<f32>, tensor<f32>) -> tensor<3xf32>
    %13 = "func.call"(%7, %9, %12) <{callee = @_where}> : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%13) : (tensor<3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<3xf32>, tensor<f32>, tensor<f32>) -> tensor<3xf32>, res_attrs = [{}], sym_name = "clip", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<3xf32>, %arg4: tensor<f32>, %arg5: tensor<f32>):
    %1 = "stablehlo.convert"(%arg4) : (tensor<f32>) -> tensor<f32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
    %3 = "stablehlo.maximum"(%2, %arg3) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %4 = "stablehlo.convert"(%arg5) : (tensor<f32>) -> tensor<f32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
    %6 = "stablehlo.minimum"(%5, %3) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%6) : (tensor<3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>, res_attrs = [{}], sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3xi1>, %arg1: tensor<3xf32>, %arg2: tensor<3xf32>):
    %0 = "stablehlo.select"(%arg0, %arg1, %arg2) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%0) : (tensor<3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = lambda x: (lax.erf(x), jnp.round(x), jnp.sign(x).astype(jnp.int32))
//   on (float32[3])
// CHECK-LABEL: func.func @main(
// CHECK:   "mlax.erf"(%arg0)
// CHECK:   "mlax.round"(%arg0) {rounding_method = "to_nearest_even"}
// CHECK:   %[[S:.*]] = "mlax.sign"(%arg0)
// CHECK:   "mlax.convert"(%[[S]]) {new_dtype = i32}
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xi32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<3xf32>):
    %1 = "chlo.erf"(%arg1) : (tensor<3xf32>) -> tensor<3xf32>
    %2 = "func.call"(%arg1) <{callee = @round}> : (tensor<3xf32>) -> tensor<3xf32>
    %3 = "stablehlo.sign"(%arg1) : (tensor<3xf32>) -> tensor<3xf32>
    %4 = "stablehlo.convert"(%3) : (tensor<3xf32>) -> tensor<3xi32>
    "func.return"(%1, %2, %4) : (tensor<3xf32>, tensor<3xf32>, tensor<3xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3xf32>) -> tensor<3xf32>, res_attrs = [{}], sym_name = "round", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3xf32>):
    %0 = "stablehlo.round_nearest_even"(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%0) : (tensor<3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = lambda i, j: (i // j, lax.shift_left(i, j), i == j)
//   on (int32[3], int32[3])
// CHECK-LABEL: func.func @main(
// CHECK:   "mlax.div"(%arg0, %arg1)
// CHECK:   "mlax.rem"(%arg0, %arg1)
// CHECK:   "mlax.and"
// CHECK:   "mlax.select"
// CHECK:   "mlax.shift_left"(%arg0, %arg1)
// CHECK:   "mlax.compare"(%arg0, %arg1) {comparison_direction = "EQ"}
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<3xi32>, tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>, tensor<3xi1>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg5: tensor<3xi32>, %arg6: tensor<3xi32>):
    %14 = "func.call"(%arg5, %arg6) <{callee = @floor_divide}> : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %15 = "stablehlo.shift_left"(%arg5, %arg6) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %16 = "stablehlo.compare"(%arg5, %arg6) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    "func.return"(%14, %15, %16) : (tensor<3xi32>, tensor<3xi32>, tensor<3xi1>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>, res_attrs = [{}], sym_name = "floor_divide", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<3xi32>, %arg4: tensor<3xi32>):
    %1 = "stablehlo.divide"(%arg3, %arg4) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %2 = "stablehlo.sign"(%arg3) : (tensor<3xi32>) -> tensor<3xi32>
    %3 = "stablehlo.sign"(%arg4) : (tensor<3xi32>) -> tensor<3xi32>
    %4 = "stablehlo.compare"(%2, %3) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    %5 = "stablehlo.remainder"(%arg3, %arg4) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %6 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<3xi32>
    %8 = "stablehlo.compare"(%5, %7) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    %9 = "stablehlo.and"(%4, %8) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
    %10 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<3xi32>
    %12 = "stablehlo.subtract"(%1, %11) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %13 = "func.call"(%9, %12, %1) <{callee = @_where}> : (tensor<3xi1>, tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    "func.return"(%13) : (tensor<3xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<3xi1>, tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>, res_attrs = [{}], sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3xi1>, %arg1: tensor<3xi32>, %arg2: tensor<3xi32>):
    %0 = "stablehlo.select"(%arg0, %arg1, %arg2) : (tensor<3xi1>, tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    "func.return"(%0) : (tensor<3xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
