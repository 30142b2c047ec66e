// The StableHLO below is jax 0.10.2's, printed by
//   jax.jit(f).lower(*args).compiler_ir('stablehlo').operation.get_asm(print_generic_op_form=True)
// (no locations) for the `f` and argument types named above each module.
// RUN: %mlax-opt %s --split-input-file --mlax-import-stablehlo | FileCheck %s

// A sort's comparator (jax's float total order, or a plain less-than) names its keys.

// f = lambda x: jnp.sort(x)
//   on (float32[5])
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:   %[[P:.*]] = "mlax.sort_permutation"(%arg0) {dimension = 0 : i64}
// CHECK-NEXT:   %[[S:.*]] = "mlax.apply_permutation"(%arg0, %[[P]]) {dimension = 0 : i64}
// CHECK-NEXT:   return %[[S]]
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<5xf32>) -> tensor<5xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg3: tensor<5xf32>):
    %16 = "func.call"(%arg3) <{callee = @sort}> : (tensor<5xf32>) -> tensor<5xf32>
    "func.return"(%16) : (tensor<5xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<5xf32>) -> tensor<5xf32>, res_attrs = [{}], sym_name = "sort", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<5xf32>):
    %0 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %1 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %4 = "stablehlo.select"(%2, %3, %arg1) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %5 = "stablehlo.compare"(%arg1, %arg1) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %7 = "stablehlo.select"(%5, %6, %4) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %8 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %9 = "stablehlo.compare"(%arg2, %8) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %10 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %11 = "stablehlo.select"(%9, %10, %arg2) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %12 = "stablehlo.compare"(%arg2, %arg2) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %13 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %14 = "stablehlo.select"(%12, %13, %11) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %15 = "stablehlo.compare"(%7, %14) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%15) : (tensor<i1>) -> ()
    }) : (tensor<5xf32>) -> tensor<5xf32>
    "func.return"(%0) : (tensor<5xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = lambda x: jnp.argsort(x)
//   on (int32[5])
// CHECK-LABEL: func.func @main(
// CHECK:   %[[IOTA:.*]] = "mlax.iota"()
// CHECK:   %[[P:.*]] = "mlax.sort_permutation"(%arg0) {dimension = 0 : i64}
// CHECK:   %[[S:.*]] = "mlax.apply_permutation"(%[[IOTA]], %[[P]]) {dimension = 0 : i64}
// CHECK:   return %[[S]]
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<5xi32>) -> tensor<5xi32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg5: tensor<5xi32>):
    %3 = "func.call"(%arg5) <{callee = @argsort}> : (tensor<5xi32>) -> tensor<5xi32>
    "func.return"(%3) : (tensor<5xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<5xi32>) -> tensor<5xi32>, res_attrs = [{}], sym_name = "argsort", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<5xi32>):
    %0 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<5xi32>
    %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>):
      %2 = "stablehlo.compare"(%arg1, %arg2) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%2) : (tensor<i1>) -> ()
    }) : (tensor<5xi32>, tensor<5xi32>) -> (tensor<5xi32>, tensor<5xi32>)
    "func.return"(%1#1) : (tensor<5xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = lambda x: lax.top_k(x, 2)
//   on (float32[5])
// CHECK-LABEL: func.func @main(
// CHECK:   "mlax.top_k"(%arg0) {k = 2 : i64}
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<5xf32>) -> (tensor<2xf32>, tensor<2xi32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<5xf32>):
    %0:2 = "chlo.top_k"(%arg0) <{k = 2 : i64}> : (tensor<5xf32>) -> (tensor<2xf32>, tensor<2xi32>)
    "func.return"(%0#0, %0#1) : (tensor<2xf32>, tensor<2xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
