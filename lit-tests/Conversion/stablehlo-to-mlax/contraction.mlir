// The StableHLO below is jax 0.10.2's, printed by
//   jax.jit(f).lower(*args).compiler_ir('stablehlo').operation.get_asm(print_generic_op_form=True)
// (no locations) for the `f` and argument types named above each module.
// RUN: %mlax-opt %s --split-input-file --mlax-import-stablehlo | FileCheck %s

// f = lambda a, b: jnp.einsum('bij,bjk->bik', a, b)
//   on (float32[2, 3, 4], float32[2, 4, 5])
// CHECK-LABEL: func.func @main(
// CHECK:   "mlax.dot_general"(%arg0, %arg1) {lhs_batch_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, result_dtype = f32, rhs_batch_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 1>}
// CHECK-SAME:  -> tensor<2x3x5xf32>
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2x3x4xf32>, %arg1: tensor<2x4x5xf32>):
    %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
    "func.return"(%0) : (tensor<2x3x5xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = lambda x, k: lax.conv_general_dilated(x, k, (1, 1), 'SAME', dimension_numbers=('NHWC', 'HWIO', 'NHWC'))
//   on (float32[1, 4, 4, 2], float32[3, 3, 2, 5])
// CHECK-LABEL: func.func @main(
// CHECK:   "mlax.conv_general_dilated"(%arg0, %arg1)
// CHECK-SAME:  lhs_spec = array<i64: 0, 3, 1, 2>, out_spec = array<i64: 0, 3, 1, 2>, padding = array<i64: 1, 1, 1, 1>
// CHECK-SAME:  rhs_spec = array<i64: 3, 2, 0, 1>, window_strides = array<i64: 1, 1>
// CHECK-SAME:  -> tensor<1x4x4x5xf32>
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<1x4x4x2xf32>, tensor<3x3x2x5xf32>) -> tensor<1x4x4x5xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<3x3x2x5xf32>):
    %0 = "stablehlo.convolution"(%arg0, %arg1) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<1> : tensor<2x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, false>, window_strides = array<i64: 1, 1>}> : (tensor<1x4x4x2xf32>, tensor<3x3x2x5xf32>) -> tensor<1x4x4x5xf32>
    "func.return"(%0) : (tensor<1x4x4x5xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
