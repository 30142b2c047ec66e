// The StableHLO below is jax 0.10.2's, printed by
//   jax.jit(f).lower(*args).compiler_ir('stablehlo').operation.get_asm(print_generic_op_form=True)
// (no locations) for the `f` and argument types named above each module.
// RUN: %mlax-opt %s --split-input-file --mlax-import-stablehlo | FileCheck %s

// StableHLO's gather and scatter keep their dimension numbers; jax's negative-index
// wrapping is explicit select ops in its program.

// f = lambda x, i: x[i]
//   on (float32[4, 3], int32[2])
// CHECK-LABEL: func.func @main(
// CHECK:   %[[I:.*]] = "mlax.broadcast_in_dim"(%{{.*}}) {broadcast_dimensions = array<i64: 0>
// CHECK:   "mlax.gather"(%arg0, %[[I]]) {collapsed_slice_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "promise_in_bounds", offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, slice_sizes = array<i64: 1, 3>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x3xf32>, %arg1: tensor<2xi32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
    %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %3 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
    %5 = "stablehlo.add"(%arg1, %4) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    %6 = "stablehlo.select"(%2, %5, %arg1) : (tensor<2xi1>, tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xi32>) -> tensor<2x1xi32>
    %8 = "stablehlo.gather"(%arg0, %7) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 3>}> : (tensor<4x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
    "func.return"(%8) : (tensor<2x3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = lambda x, i, u: x.at[i].add(u)
//   on (float32[4, 3], int32[2], float32[2, 3])
// CHECK-LABEL: func.func @main(
// CHECK:   %[[I:.*]] = "mlax.broadcast_in_dim"(%{{.*}}) {broadcast_dimensions = array<i64: 0>
// CHECK:   "mlax.scatter_add"(%arg0, %[[I]], %arg2) {index_vector_dim = 1 : i64, input_batching_dims = array<i64>, inserted_window_dims = array<i64: 0>, mode = "fill", scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x3xf32>, tensor<2xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x3xf32>, %arg1: tensor<2xi32>, %arg2: tensor<2x3xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
    %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %3 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
    %5 = "stablehlo.add"(%arg1, %4) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    %6 = "stablehlo.select"(%2, %5, %arg1) : (tensor<2xi1>, tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xi32>) -> tensor<2x1xi32>
    %8 = "stablehlo.scatter"(%arg0, %7, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %9 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%9) : (tensor<f32>) -> ()
    }) : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    "func.return"(%8) : (tensor<4x3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = lambda x, i: lax.dynamic_update_slice(x, lax.dynamic_slice(x, (i, 0), (1, 3)) * 2, (0, i))
//   on (float32[4, 3], int32[])
// CHECK-LABEL: func.func @main(
// CHECK:   %[[S:.*]] = "mlax.dynamic_slice"(%arg0, %{{.*}}, %{{.*}}) {slice_sizes = array<i64: 1, 3>}
// CHECK:   %[[U:.*]] = "mlax.mul"(%[[S]], %{{.*}})
// CHECK:   "mlax.dynamic_update_slice"(%arg0, %[[U]], %{{.*}}, %{{.*}})
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x3xf32>, tensor<i32>) -> tensor<4x3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x3xf32>, %arg1: tensor<i32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.compare"(%arg1, %0) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %2 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %3 = "stablehlo.add"(%arg1, %2) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %4 = "stablehlo.select"(%1, %3, %arg1) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %5 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %6 = "stablehlo.dynamic_slice"(%arg0, %4, %5) <{slice_sizes = array<i64: 1, 3>}> : (tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
    %7 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x3xf32>
    %9 = "stablehlo.multiply"(%6, %8) : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
    %10 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %11 = "stablehlo.compare"(%arg1, %10) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %12 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %13 = "stablehlo.add"(%arg1, %12) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %14 = "stablehlo.select"(%11, %13, %arg1) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %15 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %16 = "stablehlo.dynamic_update_slice"(%arg0, %9, %15, %14) : (tensor<4x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
    "func.return"(%16) : (tensor<4x3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
