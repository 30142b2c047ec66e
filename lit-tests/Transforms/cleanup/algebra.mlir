// RUN: %mlax-opt --mlax-cleanup %s | FileCheck %s

// Algebraic simplification: an op is replaced by its operand where that is exact, bit for
// bit, for every input (-0.0 and NaN included).

// CHECK-LABEL: func.func @test_add_zero_int
// CHECK-NEXT:    return %arg0, %arg0
func.func @test_add_zero_int(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %z = "mlax.constant"() {value = dense<0> : tensor<4xi32>} : () -> tensor<4xi32>
  %0 = "mlax.add"(%x, %z) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = "mlax.add"(%z, %x) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0, %1 : tensor<4xi32>, tensor<4xi32>
}

// -0.0 is the additive identity of floats: x + -0.0 == x, even for x = -0.0.
// CHECK-LABEL: func.func @test_add_neg_zero_float
// CHECK-NEXT:    return %arg0
func.func @test_add_neg_zero_float(%x: tensor<4xf32>) -> tensor<4xf32> {
  %z = "mlax.constant"() {value = dense<-0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = "mlax.add"(%x, %z) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Unchanged: x + +0.0 turns x = -0.0 into +0.0, so it is not the identity.
// CHECK-LABEL: func.func @test_no_add_pos_zero_float
// CHECK:         "mlax.add"
func.func @test_no_add_pos_zero_float(%x: tensor<4xf32>) -> tensor<4xf32> {
  %z = "mlax.constant"() {value = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = "mlax.add"(%x, %z) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// x - +0.0 == x for every float (and x - 0 for integers).
// CHECK-LABEL: func.func @test_sub_zero
// CHECK-NEXT:    return %arg0, %arg1
func.func @test_sub_zero(%x: tensor<2xf32>, %i: tensor<2xi8>) -> (tensor<2xf32>, tensor<2xi8>) {
  %z = "mlax.constant"() {value = dense<0.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %zi = "mlax.constant"() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %0 = "mlax.sub"(%x, %z) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "mlax.sub"(%i, %zi) : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
  return %0, %1 : tensor<2xf32>, tensor<2xi8>
}

// Unchanged: 0 - x is -x, not x (sub does not commute).
// CHECK-LABEL: func.func @test_no_sub_zero_lhs
// CHECK:         "mlax.sub"
func.func @test_no_sub_zero_lhs(%x: tensor<2xi32>) -> tensor<2xi32> {
  %z = "mlax.constant"() {value = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %0 = "mlax.sub"(%z, %x) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// Unchanged: x - -0.0 is x + 0.0, which turns -0.0 into +0.0.
// CHECK-LABEL: func.func @test_no_sub_neg_zero_float
// CHECK:         "mlax.sub"
func.func @test_no_sub_neg_zero_float(%x: tensor<2xf32>) -> tensor<2xf32> {
  %z = "mlax.constant"() {value = dense<-0.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "mlax.sub"(%x, %z) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// x * 1 on either side, for floats, integers and booleans (where mul is "and").
// CHECK-LABEL: func.func @test_mul_one
// CHECK-NEXT:    return %arg0, %arg1, %arg2
func.func @test_mul_one(%x: tensor<3xf32>, %i: tensor<3xui8>, %b: tensor<3xi1>) -> (tensor<3xf32>, tensor<3xui8>, tensor<3xi1>) {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %onei = "mlax.constant"() {value = dense<1> : tensor<3xui8>} : () -> tensor<3xui8>
  %true = "mlax.constant"() {value = dense<true> : tensor<3xi1>} : () -> tensor<3xi1>
  %0 = "mlax.mul"(%one, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "mlax.mul"(%i, %onei) : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  %2 = "mlax.mul"(%b, %true) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return %0, %1, %2 : tensor<3xf32>, tensor<3xui8>, tensor<3xi1>
}

// Unchanged: only a splat of exactly 1 is the identity (not 2, not [1, 2, 1]).
// CHECK-LABEL: func.func @test_no_mul_not_one
// CHECK-COUNT-2: "mlax.mul"
func.func @test_no_mul_not_one(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %two = "mlax.constant"() {value = dense<2.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %mixed = "mlax.constant"() {value = dense<[1.0, 2.0, 1.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = "mlax.mul"(%x, %two) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "mlax.mul"(%x, %mixed) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// neg(neg(x)) == x, also for the most negative integer (both negations wrap).
// CHECK-LABEL: func.func @test_neg_neg
// CHECK-NEXT:    return %arg0
func.func @test_neg_neg(%x: tensor<5xi32>) -> tensor<5xi32> {
  %0 = "mlax.neg"(%x) : (tensor<5xi32>) -> tensor<5xi32>
  %1 = "mlax.neg"(%0) : (tensor<5xi32>) -> tensor<5xi32>
  return %1 : tensor<5xi32>
}

// Unchanged: a single negation is not the identity.
// CHECK-LABEL: func.func @test_no_neg_single
// CHECK:         "mlax.neg"
func.func @test_no_neg_single(%x: tensor<5xf32>) -> tensor<5xf32> {
  %0 = "mlax.neg"(%x) : (tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// not(not(x)) == x, bitwise on integers and logical on booleans.
// CHECK-LABEL: func.func @test_not_not
// CHECK-NEXT:    return %arg0, %arg1
func.func @test_not_not(%b: tensor<2xi1>, %i: tensor<2xui16>) -> (tensor<2xi1>, tensor<2xui16>) {
  %0 = "mlax.not"(%b) : (tensor<2xi1>) -> tensor<2xi1>
  %1 = "mlax.not"(%0) : (tensor<2xi1>) -> tensor<2xi1>
  %2 = "mlax.not"(%i) : (tensor<2xui16>) -> tensor<2xui16>
  %3 = "mlax.not"(%2) : (tensor<2xui16>) -> tensor<2xui16>
  return %1, %3 : tensor<2xi1>, tensor<2xui16>
}

// Unchanged: not(neg(x)) is not x (two different involutions do not cancel).
// CHECK-LABEL: func.func @test_no_not_neg
// CHECK:         "mlax.neg"
// CHECK:         "mlax.not"
func.func @test_no_not_neg(%x: tensor<2xi8>) -> tensor<2xi8> {
  %0 = "mlax.neg"(%x) : (tensor<2xi8>) -> tensor<2xi8>
  %1 = "mlax.not"(%0) : (tensor<2xi8>) -> tensor<2xi8>
  return %1 : tensor<2xi8>
}

// CHECK-LABEL: func.func @test_convert_same_type
// CHECK-NEXT:    return %arg0
func.func @test_convert_same_type(%x: tensor<2x3xbf16>) -> tensor<2x3xbf16> {
  %0 = "mlax.convert"(%x) {new_dtype = bf16} : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}

// Unchanged: converting to another dtype changes the values.
// CHECK-LABEL: func.func @test_no_convert_other_type
// CHECK:         "mlax.convert"
func.func @test_no_convert_other_type(%x: tensor<2x3xf32>) -> tensor<2x3xf16> {
  %0 = "mlax.convert"(%x) {new_dtype = f16} : (tensor<2x3xf32>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// CHECK-LABEL: func.func @test_reshape_same_shape
// CHECK-NEXT:    return %arg0
func.func @test_reshape_same_shape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "mlax.reshape"(%x) {shape = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// Unchanged: a reshape to another shape is a real reshape.
// CHECK-LABEL: func.func @test_no_reshape_other_shape
// CHECK:         "mlax.reshape"
func.func @test_no_reshape_other_shape(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "mlax.reshape"(%x) {shape = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// CHECK-LABEL: func.func @test_transpose_identity
// CHECK-NEXT:    return %arg0
func.func @test_transpose_identity(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "mlax.transpose"(%x) {permutation = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// Unchanged: swapping the axes of a square matrix keeps the type but moves elements.
// CHECK-LABEL: func.func @test_no_transpose_square_swap
// CHECK:         "mlax.transpose"
func.func @test_no_transpose_square_swap(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = "mlax.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// CHECK-LABEL: func.func @test_broadcast_same_shape
// CHECK-NEXT:    return %arg0
func.func @test_broadcast_same_shape(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = "mlax.broadcast_in_dim"(%x) {shape = array<i64: 2, 3>, broadcast_dimensions = array<i64: 0, 1>} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// Unchanged: broadcasting to a bigger shape replicates elements.
// CHECK-LABEL: func.func @test_no_broadcast_new_dim
// CHECK:         "mlax.broadcast_in_dim"
func.func @test_no_broadcast_new_dim(%x: tensor<3xi32>) -> tensor<2x3xi32> {
  %0 = "mlax.broadcast_in_dim"(%x) {shape = array<i64: 2, 3>, broadcast_dimensions = array<i64: 1>} : (tensor<3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// Unchanged: stop_gradient is the identity on values, but autodiff still needs the marker.
// CHECK-LABEL: func.func @test_no_stop_gradient
// CHECK:         "mlax.stop_gradient"
func.func @test_no_stop_gradient(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.stop_gradient"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// The keepdims pattern: a reshape that inserts a size-1 dim, then a broadcast, is one broadcast.
// CHECK-LABEL: func.func @test_broadcast_of_keepdims_reshape
// CHECK-NEXT:    %[[B:.+]] = "mlax.broadcast_in_dim"(%arg0) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 5, 4>}
// CHECK-NEXT:    return %[[B]]
func.func @test_broadcast_of_keepdims_reshape(%x: tensor<5xf32>) -> tensor<5x4xf32> {
  %0 = "mlax.reshape"(%x) {shape = array<i64: 5, 1>} : (tensor<5xf32>) -> tensor<5x1xf32>
  %1 = "mlax.broadcast_in_dim"(%0) {shape = array<i64: 5, 4>, broadcast_dimensions = array<i64: 0, 1>} : (tensor<5x1xf32>) -> tensor<5x4xf32>
  return %1 : tensor<5x4xf32>
}

// CHECK-LABEL: func.func @test_broadcast_of_broadcast
// CHECK-NEXT:    %[[B:.+]] = "mlax.broadcast_in_dim"(%arg0) {broadcast_dimensions = array<i64: 2>, shape = array<i64: 2, 3, 4>}
// CHECK-NEXT:    return %[[B]]
func.func @test_broadcast_of_broadcast(%x: tensor<4xi32>) -> tensor<2x3x4xi32> {
  %0 = "mlax.broadcast_in_dim"(%x) {shape = array<i64: 3, 4>, broadcast_dimensions = array<i64: 1>} : (tensor<4xi32>) -> tensor<3x4xi32>
  %1 = "mlax.broadcast_in_dim"(%0) {shape = array<i64: 2, 3, 4>, broadcast_dimensions = array<i64: 1, 2>} : (tensor<3x4xi32>) -> tensor<2x3x4xi32>
  return %1 : tensor<2x3x4xi32>
}

// Unchanged: this reshape moves elements between dims (6 -> 2x3), so it is not a keepdims.
// CHECK-LABEL: func.func @test_no_broadcast_of_real_reshape
// CHECK:         "mlax.reshape"
// CHECK:         "mlax.broadcast_in_dim"
func.func @test_no_broadcast_of_real_reshape(%x: tensor<6xf32>) -> tensor<4x2x3xf32> {
  %0 = "mlax.reshape"(%x) {shape = array<i64: 2, 3>} : (tensor<6xf32>) -> tensor<2x3xf32>
  %1 = "mlax.broadcast_in_dim"(%0) {shape = array<i64: 4, 2, 3>, broadcast_dimensions = array<i64: 1, 2>} : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
  return %1 : tensor<4x2x3xf32>
}
