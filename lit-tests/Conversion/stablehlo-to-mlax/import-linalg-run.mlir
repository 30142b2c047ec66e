// The StableHLO below is jax 0.10.2's on CPU, printed by
//   jax.jit(f).lower(*args).compiler_ir('stablehlo').operation.get_asm(print_generic_op_form=True)
// (no locations), for
//   f = lambda a, b: (jnp.linalg.solve(a, b), jnp.linalg.cholesky(a @ a.T), jnp.linalg.eigvalsh(a + a.T),
//                     jnp.linalg.svd(a, compute_uv=False), jnp.abs(jnp.fft.fft(b[:, 0])))
//   on (float32[3, 3], float32[3, 2]).
// Imported, it runs on every backend with jax's values (numpy's: solve, cholesky, eigvalsh, svd, fft).
// RUN: %mlax-opt %s --mlax-import-stablehlo | %mlax-run --entry main --backend interpreter --precision 6 --input '[[4, 1, 0], [1, 3, 1], [0, 1, 2]]' --input '[[1, 2], [0, 1], [1, 0]]' | FileCheck %s
// RUN: %mlax-opt %s --mlax-import-stablehlo | %mlax-run --entry main --backend cpu --precision 6 --input '[[4, 1, 0], [1, 3, 1], [0, 1, 2]]' --input '[[1, 2], [0, 1], [1, 0]]' | FileCheck %s
// RUN: %mlax-opt %s --mlax-import-stablehlo | %mlax-run --entry main --backend xla --precision 6 --input '[[4, 1, 0], [1, 3, 1], [0, 1, 2]]' --input '[[1, 2], [0, 1], [1, 0]]' | FileCheck %s
// CHECK: result[0]: tensor<3x2xf32> = {{\[\[}}0.333333, 0.444444], [-0.333333, 0.222222], [0.666667, -0.111111]]
// CHECK: result[1]: tensor<3x3xf32> = {{\[\[}}4.12311, 0, 0], [1.69775, 2.84915, 0], [0.242536, 1.61039, 1.53226]]
// CHECK: result[2]: tensor<3xf32> = [2.5359, 6, 9.4641]
// CHECK: result[3]: tensor<3xf32> = [4.73205, 3, 1.26795]
// CHECK: result[4]: tensor<3xf32> = [2, 1, 1]
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<3x3xf32>, tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg25: tensor<3x3xf32>, %arg26: tensor<3x2xf32>):
    %137 = "func.call"(%arg25, %arg26) <{callee = @solve}> : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
    %138 = "stablehlo.transpose"(%arg25) <{permutation = array<i64: 1, 0>}> : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %139 = "stablehlo.dot_general"(%arg25, %138) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %140 = "func.call"(%139) <{callee = @cholesky}> : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %141 = "stablehlo.transpose"(%arg25) <{permutation = array<i64: 1, 0>}> : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %142 = "stablehlo.add"(%arg25, %141) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %143 = "func.call"(%142) <{callee = @eigvalsh}> : (tensor<3x3xf32>) -> tensor<3xf32>
    %144 = "func.call"(%arg25) <{callee = @svd}> : (tensor<3x3xf32>) -> tensor<3xf32>
    %145 = "stablehlo.slice"(%arg26) <{limit_indices = array<i64: 3, 1>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<3x2xf32>) -> tensor<3x1xf32>
    %146 = "stablehlo.reshape"(%145) : (tensor<3x1xf32>) -> tensor<3xf32>
    %147 = "func.call"(%146) <{callee = @fft}> : (tensor<3xf32>) -> tensor<3xcomplex<f32>>
    %148 = "stablehlo.abs"(%147) : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
    "func.return"(%137, %140, %143, %144, %148) : (tensor<3x2xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>, res_attrs = [{}], sym_name = "solve", sym_visibility = "private"}> ({
  ^bb0(%arg15: tensor<3x3xf32>, %arg16: tensor<3x2xf32>):
    %113:3 = "stablehlo.custom_call"(%arg15) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_sgetrf_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]}> {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m], []) {i=3, j=3, k=3, l=3, m=3}, custom>} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xi32>, tensor<i32>)
    %114 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %115 = "stablehlo.broadcast_in_dim"(%114) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<3xi32>
    %116 = "stablehlo.subtract"(%113#1, %115) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %117 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %118 = "stablehlo.broadcast_in_dim"(%117) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<i32>
    %119 = "stablehlo.compare"(%113#2, %118) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %120 = "stablehlo.broadcast_in_dim"(%119) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1x1xi1>
    %121 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %122 = "stablehlo.broadcast_in_dim"(%121) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %123 = "stablehlo.broadcast_in_dim"(%120) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xi1>) -> tensor<3x3xi1>
    %124 = "stablehlo.select"(%123, %113#0, %122) : (tensor<3x3xi1>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %125 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<3xi32>
    %126 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %127 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %128:4 = "stablehlo.while"(%116, %127, %126, %125) ({
    ^bb0(%arg21: tensor<3xi32>, %arg22: tensor<i32>, %arg23: tensor<i32>, %arg24: tensor<3xi32>):
      %135 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
      %136 = "stablehlo.compare"(%arg22, %135) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%136) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg17: tensor<3xi32>, %arg18: tensor<i32>, %arg19: tensor<i32>, %arg20: tensor<3xi32>):
      %132:2 = "func.call"(%arg17, %arg19, %arg20) <{callee = @closed_call}> : (tensor<3xi32>, tensor<i32>, tensor<3xi32>) -> (tensor<i32>, tensor<3xi32>)
      %133 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %134 = "stablehlo.add"(%arg18, %133) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%arg17, %134, %132#0, %132#1) : (tensor<3xi32>, tensor<i32>, tensor<i32>, tensor<3xi32>) -> ()
    }) : (tensor<3xi32>, tensor<i32>, tensor<i32>, tensor<3xi32>) -> (tensor<3xi32>, tensor<i32>, tensor<i32>, tensor<3xi32>)
    %129 = "stablehlo.transpose"(%arg16) <{permutation = array<i64: 1, 0>}> : (tensor<3x2xf32>) -> tensor<2x3xf32>
    %130 = "func.call"(%124, %128#3, %129) <{callee = @_lu_solve}> : (tensor<3x3xf32>, tensor<3xi32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %131 = "stablehlo.transpose"(%130) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
    "func.return"(%131) : (tensor<3x2xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3xi32>, tensor<i32>, tensor<3xi32>) -> (tensor<i32>, tensor<3xi32>), res_attrs = [{}, {}], sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg8: tensor<3xi32>, %arg9: tensor<i32>, %arg10: tensor<3xi32>):
    %73 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %74 = "stablehlo.add"(%arg9, %73) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %75 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %76 = "stablehlo.compare"(%arg9, %75) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %77 = "stablehlo.convert"(%arg9) : (tensor<i32>) -> tensor<i32>
    %78 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %79 = "stablehlo.add"(%77, %78) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %80 = "stablehlo.select"(%76, %79, %arg9) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %81 = "stablehlo.dynamic_slice"(%arg8, %80) <{slice_sizes = array<i64: 1>}> : (tensor<3xi32>, tensor<i32>) -> tensor<1xi32>
    %82 = "stablehlo.reshape"(%81) : (tensor<1xi32>) -> tensor<i32>
    %83 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %84 = "stablehlo.compare"(%arg9, %83) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %85 = "stablehlo.convert"(%arg9) : (tensor<i32>) -> tensor<i32>
    %86 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %87 = "stablehlo.add"(%85, %86) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %88 = "stablehlo.select"(%84, %87, %arg9) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %89 = "stablehlo.dynamic_slice"(%arg10, %88) <{slice_sizes = array<i64: 1>}> : (tensor<3xi32>, tensor<i32>) -> tensor<1xi32>
    %90 = "stablehlo.reshape"(%89) : (tensor<1xi32>) -> tensor<i32>
    %91 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %92 = "stablehlo.compare"(%82, %91) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %93 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %94 = "stablehlo.add"(%82, %93) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %95 = "stablehlo.select"(%92, %94, %82) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %96 = "stablehlo.dynamic_slice"(%arg10, %95) <{slice_sizes = array<i64: 1>}> : (tensor<3xi32>, tensor<i32>) -> tensor<1xi32>
    %97 = "stablehlo.reshape"(%96) : (tensor<1xi32>) -> tensor<i32>
    %98 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %99 = "stablehlo.compare"(%arg9, %98) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %100 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %101 = "stablehlo.add"(%arg9, %100) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %102 = "stablehlo.select"(%99, %101, %arg9) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %103 = "stablehlo.convert"(%102) : (tensor<i32>) -> tensor<i32>
    %104 = "stablehlo.broadcast_in_dim"(%103) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<1xi32>
    %105 = "stablehlo.scatter"(%arg10, %104, %97) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg13: tensor<i32>, %arg14: tensor<i32>):
      "stablehlo.return"(%arg14) : (tensor<i32>) -> ()
    }) : (tensor<3xi32>, tensor<1xi32>, tensor<i32>) -> tensor<3xi32>
    %106 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %107 = "stablehlo.compare"(%82, %106) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %108 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %109 = "stablehlo.add"(%82, %108) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %110 = "stablehlo.select"(%107, %109, %82) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %111 = "stablehlo.broadcast_in_dim"(%110) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<1xi32>
    %112 = "stablehlo.scatter"(%105, %111, %90) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg11: tensor<i32>, %arg12: tensor<i32>):
      "stablehlo.return"(%arg12) : (tensor<i32>) -> ()
    }) : (tensor<3xi32>, tensor<1xi32>, tensor<i32>) -> tensor<3xi32>
    "func.return"(%74, %112) : (tensor<i32>, tensor<3xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<3x3xf32>, tensor<3xi32>, tensor<2x3xf32>) -> tensor<2x3xf32>, res_attrs = [{}], sym_name = "_lu_solve", sym_visibility = "private"}> ({
  ^bb0(%arg5: tensor<3x3xf32>, %arg6: tensor<3xi32>, %arg7: tensor<2x3xf32>):
    %54 = "stablehlo.broadcast_in_dim"(%arg7) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
    %55 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %56 = "stablehlo.broadcast_in_dim"(%55) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<3xi32>
    %57 = "stablehlo.compare"(%arg6, %56) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    %58 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %59 = "stablehlo.broadcast_in_dim"(%58) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<3xi32>
    %60 = "stablehlo.add"(%arg6, %59) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %61 = "stablehlo.select"(%57, %60, %arg6) : (tensor<3xi1>, tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %62 = "stablehlo.broadcast_in_dim"(%61) <{broadcast_dimensions = array<i64: 0>}> : (tensor<3xi32>) -> tensor<3x1xi32>
    %63 = "stablehlo.gather"(%54, %62) <{dimension_numbers = #stablehlo.gather<offset_dims = [0, 2], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 2, 1, 1>}> : (tensor<2x3x1xf32>, tensor<3x1xi32>) -> tensor<2x3x1xf32>
    %64 = "stablehlo.transpose"(%63) <{permutation = array<i64: 1, 2, 0>}> : (tensor<2x3x1xf32>) -> tensor<3x1x2xf32>
    %65 = "stablehlo.reshape"(%64) : (tensor<3x1x2xf32>) -> tensor<3x2xf32>
    %66 = "stablehlo.custom_call"(%arg5, %65) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_strsm_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {diag = 85 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=3, j=3, k=3, l=2, m=3, n=2}, custom>} : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
    %67 = "stablehlo.reshape"(%66) : (tensor<3x2xf32>) -> tensor<3x1x2xf32>
    %68 = "stablehlo.reshape"(%67) : (tensor<3x1x2xf32>) -> tensor<3x2xf32>
    %69 = "stablehlo.custom_call"(%arg5, %68) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_strsm_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 85 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=3, j=3, k=3, l=2, m=3, n=2}, custom>} : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
    %70 = "stablehlo.reshape"(%69) : (tensor<3x2xf32>) -> tensor<3x1x2xf32>
    %71 = "stablehlo.transpose"(%70) <{permutation = array<i64: 2, 0, 1>}> : (tensor<3x1x2xf32>) -> tensor<2x3x1xf32>
    %72 = "stablehlo.reshape"(%71) : (tensor<2x3x1xf32>) -> tensor<2x3xf32>
    "func.return"(%72) : (tensor<2x3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x3xf32>) -> tensor<3x3xf32>, res_attrs = [{}], sym_name = "cholesky", sym_visibility = "private"}> ({
  ^bb0(%arg4: tensor<3x3xf32>):
    %31 = "stablehlo.transpose"(%arg4) <{permutation = array<i64: 1, 0>}> : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %32 = "stablehlo.add"(%arg4, %31) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %33 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %34 = "stablehlo.broadcast_in_dim"(%33) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %35 = "stablehlo.divide"(%32, %34) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %36:2 = "stablehlo.custom_call"(%35) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_spotrf_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]}> {mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], []) {i=3, j=3, k=3, l=3}, custom>} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
    %37 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %38 = "stablehlo.broadcast_in_dim"(%37) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<i32>
    %39 = "stablehlo.compare"(%36#1, %38) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %40 = "stablehlo.broadcast_in_dim"(%39) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1x1xi1>
    %41 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %42 = "stablehlo.broadcast_in_dim"(%41) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %43 = "stablehlo.broadcast_in_dim"(%40) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xi1>) -> tensor<3x3xi1>
    %44 = "stablehlo.select"(%43, %36#0, %42) : (tensor<3x3xi1>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %45 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<3x3xi32>
    %46 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %47 = "stablehlo.broadcast_in_dim"(%46) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<3x3xi32>
    %48 = "stablehlo.add"(%45, %47) : (tensor<3x3xi32>, tensor<3x3xi32>) -> tensor<3x3xi32>
    %49 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<3x3xi32>
    %50 = "stablehlo.compare"(%48, %49) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<3x3xi32>, tensor<3x3xi32>) -> tensor<3x3xi1>
    %51 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %52 = "stablehlo.broadcast_in_dim"(%51) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %53 = "stablehlo.select"(%50, %44, %52) : (tensor<3x3xi1>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    "func.return"(%53) : (tensor<3x3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x3xf32>) -> tensor<3xf32>, res_attrs = [{}], sym_name = "eigvalsh", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<3x3xf32>):
    %30 = "func.call"(%arg3) <{callee = @eigh}> : (tensor<3x3xf32>) -> tensor<3xf32>
    "func.return"(%30) : (tensor<3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x3xf32>) -> tensor<3xf32>, res_attrs = [{}], sym_name = "eigh", sym_visibility = "private"}> ({
  ^bb0(%arg2: tensor<3x3xf32>):
    %11 = "stablehlo.transpose"(%arg2) <{permutation = array<i64: 1, 0>}> : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %12 = "stablehlo.add"(%arg2, %11) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %13 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %15 = "stablehlo.divide"(%12, %14) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %16:3 = "stablehlo.custom_call"(%15) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_ssyevd_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]}> {mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m], []) {i=3, j=3, k=3, l=3, m=3}, custom>} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<i32>)
    %17 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %18 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<i32>
    %19 = "stablehlo.compare"(%16#2, %18) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1x1xi1>
    %21 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %22 = "stablehlo.broadcast_in_dim"(%21) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x3xf32>
    %23 = "stablehlo.broadcast_in_dim"(%20) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xi1>) -> tensor<3x3xi1>
    %24 = "stablehlo.select"(%23, %16#0, %22) : (tensor<3x3xi1>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %25 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1xi1>
    %26 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %27 = "stablehlo.broadcast_in_dim"(%26) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
    %28 = "stablehlo.broadcast_in_dim"(%25) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xi1>) -> tensor<3xi1>
    %29 = "stablehlo.select"(%28, %16#1, %27) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%29) : (tensor<3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x3xf32>) -> tensor<3xf32>, res_attrs = [{}], sym_name = "svd", sym_visibility = "private"}> ({
  ^bb0(%arg1: tensor<3x3xf32>):
    %2:5 = "stablehlo.custom_call"(%arg1) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_sgesdd_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]}> {mhlo.backend_config = {mode = 78 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m], [n, o], [p, q], []) {i=3, j=3, k=3, l=3, m=3, n=3, o=3, p=3, q=3}, custom>} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<i32>)
    %3 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<i32>
    %5 = "stablehlo.compare"(%2#4, %4) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1xi1>
    %7 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
    %9 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xi1>) -> tensor<3xi1>
    %10 = "stablehlo.select"(%9, %2#1, %8) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%10) : (tensor<3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3xf32>) -> tensor<3xcomplex<f32>>, res_attrs = [{}], sym_name = "fft", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3xf32>):
    %0 = "stablehlo.convert"(%arg0) : (tensor<3xf32>) -> tensor<3xcomplex<f32>>
    %1 = "stablehlo.fft"(%0) <{fft_length = array<i64: 3>, fft_type = #stablehlo<fft_type FFT>}> : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
    "func.return"(%1) : (tensor<3xcomplex<f32>>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
