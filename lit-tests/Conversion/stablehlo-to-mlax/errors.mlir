// The StableHLO below is jax 0.10.2's, printed by
//   jax.jit(f).lower(*args).compiler_ir('stablehlo').operation.get_asm(print_generic_op_form=True)
// (no locations) for the `f` and argument types named above each module.
// RUN: %mlax-opt %s --split-input-file --verify-diagnostics --mlax-import-stablehlo

// Ops (and bodies, custom call targets) without an mlax counterpart are errors at their
// location, never tracebacks.

// f = lambda k: lax.rng_bit_generator(k, (2, 3))[1]
//   on (uint32[4])
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4xui32>) -> tensor<2x3xui32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xui32>):
    %0 = "stablehlo.reshape"(%arg0) : (tensor<4xui32>) -> tensor<2x2xui32>
    %1 = "stablehlo.bitcast_convert"(%0) : (tensor<2x2xui32>) -> tensor<2xui64>
    // expected-error@+1 {{stablehlo.rng_bit_generator: mlax has no counterpart of this op}}
    %2:2 = "stablehlo.rng_bit_generator"(%1) <{rng_algorithm = #stablehlo<rng_algorithm DEFAULT>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x3xui32>)
    %3 = "stablehlo.bitcast_convert"(%2#0) : (tensor<2xui64>) -> tensor<2x2xui32>
    %4 = "stablehlo.reshape"(%3) : (tensor<2x2xui32>) -> tensor<4xui32>
    "func.return"(%2#1) : (tensor<2x3xui32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = lambda x: lax.reduce(x, np.float32(1), lambda a, b: a * b + 1, (0,))
//   on (float32[3])
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3xf32>) -> tensor<f32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3xf32>):
    %0 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    // expected-error@+1 {{stablehlo.reduce: a body that is neither one of add}}
    %1 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = "stablehlo.multiply"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %3 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %4 = "stablehlo.add"(%2, %3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%4) : (tensor<f32>) -> ()
    }) : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
    "func.return"(%1) : (tensor<f32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = lambda x: jax.pure_callback(np.sin, jax.ShapeDtypeStruct((3,), np.float32), x)
//   on (float32[3])
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<[], device_ids=[0]>, sym_name = "maximal_mesh_0"}> {stablehlo.mesh = {axes = [], device_ids = dense<0> : tensor<1xi64>}} : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3xf32>) -> tensor<3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3xf32>):
    // expected-error@+1 {{the custom call target 'xla_ffi_python_cpu_callback'}}
    %0 = "stablehlo.custom_call"(%arg0) <{api_version = 1 : i32, backend_config = "", call_target_name = "xla_ffi_python_cpu_callback", called_computations = [], has_side_effect = false, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]}> {mhlo.backend_config = {index = 0 : ui64}, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%0) : (tensor<3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

// -----

// f = lambda x: lax.reduce_window(x, 1.0, lax.mul, (2,), (1,), 'VALID')
//   on (float32[3])
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3xf32>) -> tensor<2xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3xf32>):
    %0 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    // expected-error@+1 {{a body that is not add, maximum or minimum}}
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1>, padding = dense<0> : tensor<1x2xi64>, window_dilations = array<i64: 1>, window_dimensions = array<i64: 2>, window_strides = array<i64: 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = "stablehlo.multiply"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%2) : (tensor<f32>) -> ()
    }) : (tensor<3xf32>, tensor<f32>) -> tensor<2xf32>
    "func.return"(%1) : (tensor<2xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
