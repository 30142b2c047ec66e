// The StableHLO below is jax 0.10.2's on CPU, printed by
//   jax.jit(f).lower(*args).compiler_ir('stablehlo').operation.get_asm(print_generic_op_form=True)
// (no locations) for the `f` and argument types named above each module: jaxlib's LAPACK custom
// calls and stablehlo.fft become mlax's decompositions and fft (import_stablehlo/linalg.py, fft.py).
// RUN: %mlax-opt %s --split-input-file --mlax-import-stablehlo | FileCheck %s

// f = jnp.linalg.cholesky
//   on (float32[3, 3])
// lapack_spotrf_ffi (uplo L) is mlax.cholesky, the upper triangle the operand's as LAPACK leaves it;
// info is 1 where the factor is NaN (mlax's failed matrices), which jax's select reads.
// CHECK-LABEL: func.func @main(
// CHECK:   %[[SYM:.*]] = "mlax.div"
// CHECK:   %[[L:.*]] = "mlax.cholesky"(%[[SYM]])
// CHECK:   %[[LOWER:.*]] = "mlax.compare"({{.*}}) {comparison_direction = "GE"}
// CHECK:   %[[FACTOR:.*]] = "mlax.select"(%[[LOWER]], %[[L]], %[[SYM]])
// CHECK:   %[[NAN:.*]] = "mlax.compare"(%[[L]], %[[L]]) {comparison_direction = "NE"}
// CHECK:   %[[FAILED:.*]] = "mlax.reduce_or"(%[[NAN]]) {dimensions = array<i64: 0, 1>}
// CHECK:   %[[INFO:.*]] = "mlax.convert"(%[[FAILED]]) {new_dtype = i32}
// CHECK:   "mlax.compare"(%[[INFO]], %{{.*}}) {comparison_direction = "EQ"}
// CHECK-NOT: stablehlo
"builtin.module"() <{sym_name = "jit_cholesky"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x3xf32>) -> tensor<3x3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<3x3xf32>):
    %23 = "func.call"(%arg1) <{callee = @cholesky}> : (tensor<3x3xf32>) -> tensor<3x3xf32>
    "func.return"(%23) : (tensor<3x3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x3xf32>) -> tensor<3x3xf32>, res_attrs = [{}], sym_name = "cholesky", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3x3xf32>):
    %0 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 1, 0>}> : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %1 = "stablehlo.add"(%arg0, %0) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %2 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %4 = "stablehlo.divide"(%1, %3) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %5:2 = "stablehlo.custom_call"(%4) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_spotrf_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]}> {mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], []) {i=3, j=3, k=3, l=3}, custom>} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
    %6 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<i32>
    %8 = "stablehlo.compare"(%5#1, %7) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1x1xi1>
    %10 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %12 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xi1>) -> tensor<3x3xi1>
    %13 = "stablehlo.select"(%12, %5#0, %11) : (tensor<3x3xi1>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %14 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<3x3xi32>
    %15 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %16 = "stablehlo.broadcast_in_dim"(%15) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<3x3xi32>
    %17 = "stablehlo.add"(%14, %16) : (tensor<3x3xi32>, tensor<3x3xi32>) -> tensor<3x3xi32>
    %18 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<3x3xi32>
    %19 = "stablehlo.compare"(%17, %18) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<3x3xi32>, tensor<3x3xi32>) -> tensor<3x3xi1>
    %20 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %21 = "stablehlo.broadcast_in_dim"(%20) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %22 = "stablehlo.select"(%19, %13, %21) : (tensor<3x3xi1>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    "func.return"(%22) : (tensor<3x3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True, transpose_a=True)
//   on (float32[3, 3], float32[3, 2])
// lapack_strsm_ffi's side, uplo, trans_x and diag are the op's flags.
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:   %[[X:.*]] = "mlax.triangular_solve"(%arg0, %arg1) {conjugate_a = false, left_side = true, lower = true, transpose_a = true, unit_diagonal = false}
// CHECK-NEXT:   return %[[X]]
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3x3xf32>, %arg1: tensor<3x2xf32>):
    %0 = "stablehlo.custom_call"(%arg0, %arg1) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_strsm_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=3, j=3, k=3, l=2, m=3, n=2}, custom>} : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
    "func.return"(%0) : (tensor<3x2xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = lax.linalg.lu
//   on (float32[2, 3, 3])
// lapack_sgetrf_ffi is mlax.lu with 1-based pivots; info (LAPACK's: U's first zero pivot) is
// only compared >= 0 by jax. jax's pivots-to-permutation loop is a counted while: a scan.
// CHECK-LABEL: func.func @main(
// CHECK:   %[[LU:.*]]:3 = "mlax.lu"(%arg0)
// CHECK:   "mlax.argmax"
// CHECK:   %[[ONE:.*]] = "mlax.constant"() {value = dense<1> : tensor<2x3xi32>}
// CHECK:   %[[PIVOTS:.*]] = "mlax.add"(%[[LU]]#1, %[[ONE]])
// CHECK:   call @scan_body_scan
// CHECK-NOT: stablehlo
"builtin.module"() <{sym_name = "jit_lu"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x3xi32>, tensor<2x3xi32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg7: tensor<2x3x3xf32>):
    %47:3 = "stablehlo.custom_call"(%arg7) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_sgetrf_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>]}> {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, l, m], [i, n], [i]) {i=2, j=3, k=3, l=3, m=3, n=3}, custom>} : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x3xi32>, tensor<2xi32>)
    %48 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %49 = "stablehlo.broadcast_in_dim"(%48) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2x3xi32>
    %50 = "stablehlo.subtract"(%47#1, %49) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
    %51 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %52 = "stablehlo.broadcast_in_dim"(%51) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
    %53 = "stablehlo.compare"(%47#2, %52) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %54 = "stablehlo.broadcast_in_dim"(%53) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xi1>) -> tensor<2x1x1xi1>
    %55 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %56 = "stablehlo.broadcast_in_dim"(%55) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x3x3xf32>
    %57 = "stablehlo.broadcast_in_dim"(%54) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<2x1x1xi1>) -> tensor<2x3x3xi1>
    %58 = "stablehlo.select"(%57, %47#0, %56) : (tensor<2x3x3xi1>, tensor<2x3x3xf32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
    %59 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<2x3xi32>
    %60 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %61 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %62:4 = "stablehlo.while"(%50, %61, %60, %59) ({
    ^bb0(%arg12: tensor<2x3xi32>, %arg13: tensor<i32>, %arg14: tensor<i32>, %arg15: tensor<2x3xi32>):
      %66 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
      %67 = "stablehlo.compare"(%arg13, %66) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%67) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg8: tensor<2x3xi32>, %arg9: tensor<i32>, %arg10: tensor<i32>, %arg11: tensor<2x3xi32>):
      %63:2 = "func.call"(%arg8, %arg10, %arg11) <{callee = @closed_call}> : (tensor<2x3xi32>, tensor<i32>, tensor<2x3xi32>) -> (tensor<i32>, tensor<2x3xi32>)
      %64 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %65 = "stablehlo.add"(%arg9, %64) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%arg8, %65, %63#0, %63#1) : (tensor<2x3xi32>, tensor<i32>, tensor<i32>, tensor<2x3xi32>) -> ()
    }) : (tensor<2x3xi32>, tensor<i32>, tensor<i32>, tensor<2x3xi32>) -> (tensor<2x3xi32>, tensor<i32>, tensor<i32>, tensor<2x3xi32>)
    "func.return"(%58, %50, %62#3) : (tensor<2x3x3xf32>, tensor<2x3xi32>, tensor<2x3xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2x3xi32>, tensor<i32>, tensor<2x3xi32>) -> (tensor<i32>, tensor<2x3xi32>), res_attrs = [{}, {}], sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<2x3xi32>, %arg1: tensor<i32>, %arg2: tensor<2x3xi32>):
    %0 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.add"(%arg1, %0) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3 = "stablehlo.compare"(%arg1, %2) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %4 = "stablehlo.convert"(%arg1) : (tensor<i32>) -> tensor<i32>
    %5 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %6 = "stablehlo.add"(%4, %5) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %7 = "stablehlo.select"(%3, %6, %arg1) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<1xi32>
    %9 = "stablehlo.gather"(%arg0, %8) <{dimension_numbers = #stablehlo.gather<offset_dims = [0, 1], start_index_map = [1]>, indices_are_sorted = true, slice_sizes = array<i64: 2, 1>}> : (tensor<2x3xi32>, tensor<1xi32>) -> tensor<2x1xi32>
    %10 = "stablehlo.reshape"(%9) : (tensor<2x1xi32>) -> tensor<2xi32>
    %11 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %12 = "stablehlo.compare"(%arg1, %11) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %13 = "stablehlo.convert"(%arg1) : (tensor<i32>) -> tensor<i32>
    %14 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %15 = "stablehlo.add"(%13, %14) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %16 = "stablehlo.select"(%12, %15, %arg1) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %17 = "stablehlo.broadcast_in_dim"(%16) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<1xi32>
    %18 = "stablehlo.gather"(%arg2, %17) <{dimension_numbers = #stablehlo.gather<offset_dims = [0, 1], start_index_map = [1]>, indices_are_sorted = true, slice_sizes = array<i64: 2, 1>}> : (tensor<2x3xi32>, tensor<1xi32>) -> tensor<2x1xi32>
    %19 = "stablehlo.reshape"(%18) : (tensor<2x1xi32>) -> tensor<2xi32>
    %20 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %21 = "stablehlo.broadcast_in_dim"(%20) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
    %22 = "stablehlo.compare"(%10, %21) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %23 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %24 = "stablehlo.broadcast_in_dim"(%23) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
    %25 = "stablehlo.add"(%10, %24) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    %26 = "stablehlo.select"(%22, %25, %10) : (tensor<2xi1>, tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    %27 = "stablehlo.broadcast_in_dim"(%26) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xi32>) -> tensor<2x1xi32>
    %28 = "stablehlo.gather"(%arg2, %27) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 1>, indices_are_sorted = true, slice_sizes = array<i64: 1, 1>}> : (tensor<2x3xi32>, tensor<2x1xi32>) -> tensor<2x1xi32>
    %29 = "stablehlo.reshape"(%28) : (tensor<2x1xi32>) -> tensor<2xi32>
    %30 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %31 = "stablehlo.compare"(%arg1, %30) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %32 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %33 = "stablehlo.add"(%arg1, %32) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %34 = "stablehlo.select"(%31, %33, %arg1) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %35 = "stablehlo.convert"(%34) : (tensor<i32>) -> tensor<i32>
    %36 = "stablehlo.broadcast_in_dim"(%35) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<1xi32>
    %37 = "stablehlo.scatter"(%arg2, %36, %29) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1]>, unique_indices = true}> ({
    ^bb0(%arg5: tensor<i32>, %arg6: tensor<i32>):
      "stablehlo.return"(%arg6) : (tensor<i32>) -> ()
    }) : (tensor<2x3xi32>, tensor<1xi32>, tensor<2xi32>) -> tensor<2x3xi32>
    %38 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %39 = "stablehlo.broadcast_in_dim"(%38) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
    %40 = "stablehlo.compare"(%10, %39) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %41 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %42 = "stablehlo.broadcast_in_dim"(%41) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
    %43 = "stablehlo.add"(%10, %42) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    %44 = "stablehlo.select"(%40, %43, %10) : (tensor<2xi1>, tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    %45 = "stablehlo.broadcast_in_dim"(%44) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xi32>) -> tensor<2x1xi32>
    %46 = "stablehlo.scatter"(%37, %45, %19) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 1>, unique_indices = true}> ({
    ^bb0(%arg3: tensor<i32>, %arg4: tensor<i32>):
      "stablehlo.return"(%arg4) : (tensor<i32>) -> ()
    }) : (tensor<2x3xi32>, tensor<2x1xi32>, tensor<2xi32>) -> tensor<2x3xi32>
    "func.return"(%1, %46) : (tensor<i32>, tensor<2x3xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = jnp.linalg.eigh
//   on (float32[3, 3])
// lapack_ssyevd_ffi (mode V, uplo L) is mlax.eigh; info from NaN eigenvalues.
// CHECK-LABEL: func.func @main(
// CHECK:   %[[E:.*]]:2 = "mlax.eigh"(%{{.*}}) {lower = true, sort_eigenvalues = true}
// CHECK:   "mlax.compare"(%[[E]]#1, %[[E]]#1) {comparison_direction = "NE"}
// CHECK-NOT: stablehlo
"builtin.module"() <{sym_name = "jit_eigh"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x3xf32>) -> (tensor<3xf32>, tensor<3x3xf32>), res_attrs = [{jax.result_info = "result.eigenvalues"}, {jax.result_info = "result.eigenvectors"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<3x3xf32>):
    %19:2 = "func.call"(%arg1) <{callee = @eigh}> : (tensor<3x3xf32>) -> (tensor<3xf32>, tensor<3x3xf32>)
    "func.return"(%19#0, %19#1) : (tensor<3xf32>, tensor<3x3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x3xf32>) -> (tensor<3xf32>, tensor<3x3xf32>), res_attrs = [{}, {}], sym_name = "eigh", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3x3xf32>):
    %0 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 1, 0>}> : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %1 = "stablehlo.add"(%arg0, %0) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %2 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %4 = "stablehlo.divide"(%1, %3) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %5:3 = "stablehlo.custom_call"(%4) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_ssyevd_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]}> {mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m], []) {i=3, j=3, k=3, l=3, m=3}, custom>} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<i32>)
    %6 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<i32>
    %8 = "stablehlo.compare"(%5#2, %7) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1x1xi1>
    %10 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %12 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xi1>) -> tensor<3x3xi1>
    %13 = "stablehlo.select"(%12, %5#0, %11) : (tensor<3x3xi1>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %14 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1xi1>
    %15 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %16 = "stablehlo.broadcast_in_dim"(%15) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
    %17 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xi1>) -> tensor<3xi1>
    %18 = "stablehlo.select"(%17, %5#1, %16) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%18, %13) : (tensor<3xf32>, tensor<3x3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = lambda x: jnp.linalg.svd(x, full_matrices=False)
//   on (float32[4, 3])
// lapack_sgesdd_ffi mode S is mlax.svd without full matrices.
// CHECK-LABEL: func.func @main(
// CHECK:   "mlax.svd"(%arg0) {compute_uv = true, full_matrices = false} : (tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>, tensor<3x3xf32>)
// CHECK-NOT: stablehlo
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>), res_attrs = [{jax.result_info = "result.U"}, {jax.result_info = "result.S"}, {jax.result_info = "result.Vh"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<4x3xf32>):
    %19:3 = "func.call"(%arg1) <{callee = @svd}> : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>)
    "func.return"(%19#0, %19#1, %19#2) : (tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>), res_attrs = [{}, {}, {}], sym_name = "svd", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4x3xf32>):
    %0:5 = "stablehlo.custom_call"(%arg0) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_sgesdd_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]}> {mhlo.backend_config = {mode = 83 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m], [n, o], [p, q], []) {i=4, j=3, k=4, l=3, m=3, n=4, o=3, p=3, q=3}, custom>} : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3x3xf32>, tensor<i32>)
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<i32>
    %3 = "stablehlo.compare"(%0#4, %2) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1xi1>
    %5 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
    %7 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xi1>) -> tensor<3xi1>
    %8 = "stablehlo.select"(%7, %0#1, %6) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %9 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1x1xi1>
    %10 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x3xf32>
    %12 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xi1>) -> tensor<4x3xi1>
    %13 = "stablehlo.select"(%12, %0#2, %11) : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    %14 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1x1xi1>
    %15 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %16 = "stablehlo.broadcast_in_dim"(%15) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %17 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xi1>) -> tensor<3x3xi1>
    %18 = "stablehlo.select"(%17, %0#3, %16) : (tensor<3x3xi1>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    "func.return"(%13, %8, %18) : (tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = jnp.linalg.qr
//   on (float32[3, 3])
// geqrf then orgqr: mlax's Householder ops, as jax's qr lowering.
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:   %[[P:.*]]:2 = "mlax.geqrf"(%arg0)
// CHECK-NEXT:   %[[Q:.*]] = "mlax.householder_product"(%[[P]]#0, %[[P]]#1)
// CHECK-NOT: stablehlo
"builtin.module"() <{sym_name = "jit_qr"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>), res_attrs = [{jax.result_info = "result.Q"}, {jax.result_info = "result.R"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<3x3xf32>):
    %11:2 = "func.call"(%arg1) <{callee = @qr}> : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>)
    "func.return"(%11#0, %11#1) : (tensor<3x3xf32>, tensor<3x3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>), res_attrs = [{}, {}], sym_name = "qr", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3x3xf32>):
    %0:2 = "stablehlo.custom_call"(%arg0) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_sgeqrf_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>]}> {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m]) {i=3, j=3, k=3, l=3, m=3}, custom>} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>)
    %1 = "stablehlo.custom_call"(%0#0, %0#1) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_sorgqr_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k])->([l, m]) {i=3, j=3, k=3, l=3, m=3}, custom>} : (tensor<3x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
    %2 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<3x3xi32>
    %3 = "stablehlo.constant"() <{value = dense<-1> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<3x3xi32>
    %5 = "stablehlo.add"(%2, %4) : (tensor<3x3xi32>, tensor<3x3xi32>) -> tensor<3x3xi32>
    %6 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<3x3xi32>
    %7 = "stablehlo.compare"(%5, %6) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<3x3xi32>, tensor<3x3xi32>) -> tensor<3x3xi1>
    %8 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %10 = "stablehlo.select"(%7, %9, %0#0) : (tensor<3x3xi1>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    "func.return"(%1, %10) : (tensor<3x3xf32>, tensor<3x3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = jnp.linalg.eigvals
//   on (float32[3, 3])
// lapack_sgeev_ffi without vectors: mlax.eig, its real and imaginary parts, which jax joins
// again with stablehlo.complex; jax's NaN is a complex constant.
// CHECK-LABEL: func.func @main(
// CHECK:   %[[W:.*]] = "mlax.eig"(%arg0) {compute_left_eigenvectors = false, compute_right_eigenvectors = false, enable_eigvec_derivs = false}
// CHECK:   %[[RE:.*]] = "mlax.real"(%[[W]])
// CHECK:   %[[IM:.*]] = "mlax.imag"(%[[W]])
// CHECK:   "mlax.complex"(%[[RE]], %[[IM]])
// CHECK:   "mlax.constant"() {value = dense<(0x7FC00000,0x7FC00000)> : tensor<complex<f32>>}
// CHECK-NOT: stablehlo
"builtin.module"() <{sym_name = "jit_eigvals"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x3xf32>) -> tensor<3xcomplex<f32>>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<3x3xf32>):
    %10 = "func.call"(%arg1) <{callee = @eigvals}> : (tensor<3x3xf32>) -> tensor<3xcomplex<f32>>
    "func.return"(%10) : (tensor<3xcomplex<f32>>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x3xf32>) -> tensor<3xcomplex<f32>>, res_attrs = [{}], sym_name = "eigvals", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3x3xf32>):
    %0:5 = "stablehlo.custom_call"(%arg0) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_sgeev_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]}> {mhlo.backend_config = {compute_left = 78 : ui8, compute_right = 78 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k], [l], [m, n], [o, p], []) {i=3, j=3, k=3, l=3, m=3, n=3, o=3, p=3}, custom>} : (tensor<3x3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3x3xcomplex<f32>>, tensor<3x3xcomplex<f32>>, tensor<i32>)
    %1 = "stablehlo.complex"(%0#0, %0#1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xcomplex<f32>>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<i32>
    %4 = "stablehlo.compare"(%0#4, %3) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1xi1>
    %6 = "stablehlo.constant"() <{value = dense<(0x7FC00000,0x7FC00000)> : tensor<complex<f32>>}> : () -> tensor<complex<f32>>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<complex<f32>>) -> tensor<3xcomplex<f32>>
    %8 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xi1>) -> tensor<3xi1>
    %9 = "stablehlo.select"(%8, %1, %7) : (tensor<3xi1>, tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
    "func.return"(%9) : (tensor<3xcomplex<f32>>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = lax.linalg.schur
//   on (float32[3, 3])
// lapack_sgees_ffi (mode V, sort N) is mlax.schur; the eigenvalues it also returns are unused here.
// CHECK-LABEL: func.func @main(
// CHECK:   "mlax.schur"(%arg0) {compute_schur_vectors = true}
// CHECK-NOT: mlax.sqrt
// CHECK-NOT: stablehlo
"builtin.module"() <{sym_name = "jit_schur"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3x3xf32>):
    %0:6 = "stablehlo.custom_call"(%arg0) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_sgees_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>]}> {mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m, n], [o], [p], [], []) {i=3, j=3, k=3, l=3, m=3, n=3, o=3, p=3}, custom>} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<i32>, tensor<i32>)
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<i32>
    %3 = "stablehlo.compare"(%0#5, %2) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1x1xi1>
    %5 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %7 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xi1>) -> tensor<3x3xi1>
    %8 = "stablehlo.select"(%7, %0#0, %6) : (tensor<3x3xi1>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %9 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1x1xi1>
    %10 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %12 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xi1>) -> tensor<3x3xi1>
    %13 = "stablehlo.select"(%12, %0#1, %11) : (tensor<3x3xi1>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    "func.return"(%8, %13) : (tensor<3x3xf32>, tensor<3x3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = jnp.fft.rfft
//   on (float32[2, 8])
// stablehlo.fft is mlax.fft, its kind and lengths as they are.
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:   %[[F:.*]] = "mlax.fft"(%arg0) {fft_lengths = array<i64: 8>, fft_type = "RFFT"} : (tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>>
// CHECK-NEXT:   return %[[F]]
"builtin.module"() <{sym_name = "jit_rfft"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<2x8xf32>):
    %1 = "func.call"(%arg1) <{callee = @fft}> : (tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>>
    "func.return"(%1) : (tensor<2x5xcomplex<f32>>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>>, res_attrs = [{}], sym_name = "fft", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<2x8xf32>):
    %0 = "stablehlo.fft"(%arg0) <{fft_length = array<i64: 8>, fft_type = #stablehlo<fft_type RFFT>}> : (tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>>
    "func.return"(%0) : (tensor<2x5xcomplex<f32>>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
