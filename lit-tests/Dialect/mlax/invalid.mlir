// RUN: %mlax-opt %s --split-input-file --verify-diagnostics

// Operands of an elementwise op share one type variable.
func.func @mismatched_operands(%x: tensor<3xf32>, %y: tensor<3xi32>) -> tensor<3xf32> {
  // expected-error@+1 {{expected 'tensor<3xf32>' but got 'tensor<3xi32>'}}
  %0 = "mlax.add"(%x, %y) : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @result_type_differs(%x: tensor<3xf32>) -> tensor<3xi32> {
  // expected-error@+1 {{expected 'tensor<3xf32>' but got 'tensor<3xi32>'}}
  %0 = "mlax.neg"(%x) : (tensor<3xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @not_a_tensor(%x: f32) -> f32 {
  // expected-error@+1 {{tensor}}
  %0 = "mlax.neg"(%x) : (f32) -> f32
  return %0 : f32
}

// -----

func.func @missing_attribute(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{shape}}
  %0 = "mlax.reshape"(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @attribute_of_wrong_kind(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{dense_array}}
  %0 = "mlax.transpose"(%x) {permutation = 1 : i64} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @wrong_operand_count(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{expects exactly 2 operands}}
  %0 = "mlax.mul"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @unknown_op(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{unregistered operation 'mlax.frobnicate'}}
  %0 = "mlax.frobnicate"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// IRDL only knows "tensor"; the op's inference rule checks shapes and attributes.
func.func @inferred_shape_differs(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{'mlax.reshape' op}}
  %0 = "mlax.reshape"(%x) {shape = array<i64: 2, 2>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @bad_broadcast(%x: tensor<3xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{cannot broadcast}}
  %0 = "mlax.broadcast_in_dim"(%x) {shape = array<i64: 3, 4>, broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @result_dtype_differs(%x: tensor<3xf32>) -> tensor<3xi8> {
  // expected-error@+1 {{result type(s) tensor<3xi8> differ from the inferred tensor<3xi32>}}
  %0 = "mlax.convert"(%x) {new_dtype = i32} : (tensor<3xf32>) -> tensor<3xi8>
  return %0 : tensor<3xi8>
}

// -----

// expected-error@+1 {{'func.func' op mlax does not support element type f8E4M3FN}}
func.func @unsupported_element_type(%x: tensor<3xf8E4M3FN>) -> tensor<3xf8E4M3FN> {
  // expected-error@+1 {{mlax does not support element type f8E4M3FN}}
  %0 = "mlax.exp"(%x) : (tensor<3xf8E4M3FN>) -> tensor<3xf8E4M3FN>
  return %0 : tensor<3xf8E4M3FN>
}

// -----

func.func @bad_compare_direction(%x: tensor<3xf32>) -> tensor<3xi1> {
  // expected-error@+1 {{comparison_direction must be one of}}
  %0 = "mlax.compare"(%x, %x) {comparison_direction = "less"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// --- transformation declarations -------------------------------------------------------

func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// expected-error@+1 {{unknown transformation kind 'mlax.hessian'}}
func.func private @f_hessian(tensor<3xf32>) -> tensor<3x3xf32> attributes {mlax.hessian = {callee = @f}}

// -----

// expected-error@+1 {{callee @nowhere is not a function of this module}}
func.func private @f_jvp(tensor<3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.jvp = {callee = @nowhere}}

// -----

func.func private @external(tensor<3xf32>) -> tensor<f32>
// expected-error@+1 {{callee @external is an external function without a body}}
func.func private @f_jvp(tensor<3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.jvp = {callee = @external}}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// expected-error@+1 {{mlax.vjp declaration @f_vjp: the declaration has type (tensor<3xf32>) -> tensor<3xf32> but callee @f requires (tensor<3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3xf32>)}}
func.func private @f_vjp(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.vjp = {callee = @f, argnums = array<i64: 0>}}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// expected-error@+1 {{argnums [0, 1] must be distinct indices of the callee's 1 argument(s)}}
func.func private @f_vjp(tensor<3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3xf32>) attributes {mlax.vjp = {callee = @f, argnums = array<i64: 0, 1>}}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// expected-error@+1 {{missing field 'argnums'}}
func.func private @f_vjp(tensor<3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3xf32>) attributes {mlax.vjp = {callee = @f}}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// expected-error@+1 {{field 'callee' must be a symbol reference (@f), got "f"}}
func.func private @f_jvp(tensor<3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.jvp = {callee = "f"}}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// expected-error@+1 {{unknown field(s) argnums}}
func.func private @f_jvp(tensor<3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.jvp = {callee = @f, argnums = array<i64: 0>}}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// expected-error@+1 {{in_axes[0] = 2 is out of range for tensor<3xf32>}}
func.func private @f_vmap(tensor<3xf32>) -> tensor<f32> attributes {mlax.vmap = {callee = @f, in_axes = array<i64: 2>, out_axes = array<i64: 0>, axis_size = 2 : i64}}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// expected-error@+1 {{out_axes has length 2 but the callee has 1 results}}
func.func private @f_vmap(tensor<2x3xf32>) -> tensor<2xf32> attributes {mlax.vmap = {callee = @f, in_axes = array<i64: 0>, out_axes = array<i64: 0, 0>, axis_size = 2 : i64}}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// expected-error@+2 {{must not have a body}}
// expected-error@+1 {{must be private}}
func.func @f_jvp(%x: tensor<3xf32>, %t: tensor<3xf32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.jvp = {callee = @f}} {
  %0 = func.call @f(%x) : (tensor<3xf32>) -> tensor<f32>
  return %0, %0 : tensor<f32>, tensor<f32>
}

// -----

// expected-error@+1 {{mlax.checkpoint declaration @loop_a: refers to itself through its callees}}
func.func private @loop_a(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.checkpoint = {callee = @loop_b}}
// expected-error@+1 {{mlax.checkpoint declaration @loop_b: refers to itself through its callees}}
func.func private @loop_b(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.checkpoint = {callee = @loop_a}}

// -----

func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
func.func @g_fwd(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<i32>) {
  %c = "mlax.constant"() {value = dense<7> : tensor<i32>} : () -> tensor<i32>
  return %x, %c : tensor<2xf32>, tensor<i32>
}
func.func @g_bwd(%ct: tensor<2xf32>) -> tensor<2xf32> {
  return %ct : tensor<2xf32>
}
// expected-error@+1 {{bwd function @g_bwd has type (tensor<2xf32>) -> tensor<2xf32> but callee @g requires (tensor<i32>, tensor<2xf32>) -> tensor<2xf32>}}
func.func private @g_custom(tensor<2xf32>) -> tensor<2xf32> attributes {mlax.custom_vjp_call = {callee = @g, fwd = @g_fwd, bwd = @g_bwd}}

// -----

func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
// expected-error@+1 {{several transformation attributes}}
func.func private @g_both(tensor<2xf32>) -> tensor<2xf32> attributes {mlax.checkpoint = {callee = @g}, mlax.custom_jvp_call = {callee = @g, jvp = @g}}

// -----

// Calls to a declaration are type-checked by func.call against the declared type.
func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @f_jvp(tensor<3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<f32>) attributes {mlax.jvp = {callee = @f}}
func.func @caller(%x: tensor<3xf32>) -> tensor<f32> {
  // expected-error@+1 {{'func.call' op incorrect number of operands for callee}}
  %0, %1 = func.call @f_jvp(%x) : (tensor<3xf32>) -> (tensor<f32>, tensor<f32>)
  return %0 : tensor<f32>
}

// -----

func.func @constant_type_differs() -> tensor<2xf32> {
  // expected-error@+1 {{'mlax.constant' op value has type tensor<3xf32> but the result has type tensor<2xf32>}}
  %0 = "mlax.constant"() {value = dense<1.0> : tensor<3xf32>} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expected-error@+1 {{'func.func' op mlax does not support element type complex<f16>}}
func.func @constant_unsupported_type() -> tensor<2xcomplex<f16>> {
  // expected-error@+1 {{'mlax.constant' op mlax does not support element type complex<f16>}}
  %0 = "mlax.constant"() {value = dense<(1.0, 2.0)> : tensor<2xcomplex<f16>>} : () -> tensor<2xcomplex<f16>>
  return %0 : tensor<2xcomplex<f16>>
}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @f_fwd(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = "mlax.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0, %x : tensor<3xf32>, tensor<3xf32>
}
// expected-error@+1 {{mlax.custom_vjp_call declaration @f_custom: bwd @nowhere is not a function of this module}}
func.func private @f_custom(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.custom_vjp_call = {callee = @f, fwd = @f_fwd, bwd = @nowhere}}

// -----

// --- element types ---------------------------------------------------------------------

// Builtin types mlax has no dtype for are rejected wherever a tensor of them appears: a
// signature, a block argument, a result (IRDL only knows that operands are tensors).
// expected-error@+1 {{'func.func' op mlax does not support element type si32 (in tensor<3xsi32>}}
func.func @test_signed_integer(%x: tensor<3xsi32>) -> tensor<3xsi32> {
  return %x : tensor<3xsi32>
}

// -----

// expected-error@+1 {{'func.func' op mlax does not support element type f80}}
func.func private @test_declaration_f80(tensor<3xf80>) -> tensor<3xf80>

// -----

func.func @test_index_result(%x: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{'mlax.convert' op mlax does not support element type index}}
  %0 = "mlax.convert"(%x) {new_dtype = index} : (tensor<3xi64>) -> tensor<3xindex>
  %1 = "mlax.convert"(%0) {new_dtype = i64} : (tensor<3xindex>) -> tensor<3xi64>
  return %1 : tensor<3xi64>
}

// -----

// The transformation passes walk into everything a callee calls: a recursion would never end.
func.func @test_recursive(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @test_recursive(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// expected-error@+1 {{mlax.vmap declaration @test_recursive_vmap: reaches @test_recursive, which calls itself; a recursive function cannot be transformed}}
func.func private @test_recursive_vmap(tensor<2x3xf32>) -> tensor<2x3xf32> attributes {mlax.vmap = {callee = @test_recursive, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 2 : i64}}

// -----

// mlax values have static shapes (the inference rules read every dimension as a size).
func.func @test_dynamic_dimension(%x: tensor<3x4xf32>, %u: tensor<?x2xf32>, %i: tensor<i32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'mlax.dynamic_update_slice' op has a value of type tensor<?x2xf32>; mlax values are tensors of static shape}}
  %0 = "mlax.dynamic_update_slice"(%x, %u, %i, %i) : (tensor<3x4xf32>, tensor<?x2xf32>, tensor<i32>, tensor<i32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func private @h(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
// expected-error@+1 {{prevent_cse}}
func.func private @h_remat(tensor<2xf32>) -> tensor<2xf32> attributes {mlax.checkpoint = {callee = @h, prevent_cse = 1 : i64}}
