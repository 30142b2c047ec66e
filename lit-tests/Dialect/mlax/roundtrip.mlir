// RUN: %mlax-roundtrip | FileCheck %s
// RUN: %mlir-opt --irdl-file=%irdl %s | %mlir-opt --irdl-file=%irdl | FileCheck %s

// Every op of the mlax dialect, one function per op family, in generic form: mlax-opt
// (IRDL, type inference) and upstream mlir-opt (IRDL only) both parse, verify and print
// it, and the printed form reads back. A pytest (tests/tools/test_lit_coverage.py)
// checks that every op of the table appears here.

// CHECK-LABEL: func.func @test_constants(
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.constant"() {value = dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.constant"() {value = dense<0x7FC00000> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.iota"() {dimension = 0 : i64, dtype = i32, shape = array<i64: 4>} : () -> tensor<4xi32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.constant"() {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.constant"() {value = dense<> : tensor<0x3xbf16>} : () -> tensor<0x3xbf16>
// CHECK-NEXT:    return %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : tensor<2x3xf32>, tensor<f32>, tensor<4xi32>, tensor<2xi1>, tensor<0x3xbf16>
func.func @test_constants() -> (tensor<2x3xf32>, tensor<f32>, tensor<4xi32>, tensor<2xi1>, tensor<0x3xbf16>) {
  %0 = "mlax.constant"() {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %1 = "mlax.constant"() {value = dense<0x7FC00000> : tensor<f32>} : () -> tensor<f32>
  %2 = "mlax.iota"() {shape = array<i64: 4>, dtype = i32, dimension = 0 : i64} : () -> tensor<4xi32>
  %3 = "mlax.constant"() {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
  %4 = "mlax.constant"() {value = dense<> : tensor<0x3xbf16>} : () -> tensor<0x3xbf16>
  return %0, %1, %2, %3, %4 : tensor<2x3xf32>, tensor<f32>, tensor<4xi32>, tensor<2xi1>, tensor<0x3xbf16>
}

// CHECK-LABEL: func.func @test_unary(
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.neg"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.abs"(%{{[a-z0-9_]+}}) : (tensor<5xi32>) -> tensor<5xi32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.sign"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.floor"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.ceil"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.round"(%{{[a-z0-9_]+}}) {rounding_method = "to_nearest_even"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.exp"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.exp2"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.expm1"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.log"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.log1p"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.sqrt"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.rsqrt"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.cbrt"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.sin"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.cos"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.tan"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.tanh"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.logistic"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.erf"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.erf_inv"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.erfc"(%{{[a-z0-9_]+}}) : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.is_finite"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.not"(%{{[a-z0-9_]+}}) : (tensor<5xi1>) -> tensor<5xi1>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.population_count"(%{{[a-z0-9_]+}}) : (tensor<5xi32>) -> tensor<5xi32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.stop_gradient"(%{{[a-z0-9_]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.optimization_barrier"(%{{[a-z0-9_]+}}) : (tensor<5xi32>) -> tensor<5xi32>
// CHECK-NEXT:    return
func.func @test_unary(%x: tensor<2x3xf32>, %i: tensor<5xi32>, %b: tensor<5xi1>, %h: tensor<2x3xbf16>) {
  %0 = "mlax.neg"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "mlax.abs"(%i) : (tensor<5xi32>) -> tensor<5xi32>
  %2 = "mlax.sign"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = "mlax.floor"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = "mlax.ceil"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = "mlax.round"(%x) {rounding_method = "to_nearest_even"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = "mlax.exp"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = "mlax.exp2"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %8 = "mlax.expm1"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = "mlax.log"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %10 = "mlax.log1p"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %11 = "mlax.sqrt"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %12 = "mlax.rsqrt"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %13 = "mlax.cbrt"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %14 = "mlax.sin"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %15 = "mlax.cos"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %16 = "mlax.tan"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %17 = "mlax.tanh"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %18 = "mlax.logistic"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %19 = "mlax.erf"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %20 = "mlax.erf_inv"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %erfc = "mlax.erfc"(%h) : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  %21 = "mlax.is_finite"(%x) : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %22 = "mlax.not"(%b) : (tensor<5xi1>) -> tensor<5xi1>
  %23 = "mlax.population_count"(%i) : (tensor<5xi32>) -> tensor<5xi32>
  %24 = "mlax.stop_gradient"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %25 = "mlax.optimization_barrier"(%i) : (tensor<5xi32>) -> tensor<5xi32>
  return
}

// CHECK-LABEL: func.func @test_binary(
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.add"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.sub"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.mul"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.div"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.rem"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.pow"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.max"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.min"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.atan2"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.and"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.or"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.xor"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.shift_left"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.shift_right_logical"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.shift_right_arithmetic"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.nextafter"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    return
func.func @test_binary(%x: tensor<3xf32>, %y: tensor<3xf32>, %i: tensor<3xui32>, %j: tensor<3xui32>) {
  %0 = "mlax.add"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "mlax.sub"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = "mlax.mul"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %3 = "mlax.div"(%i, %j) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
  %4 = "mlax.rem"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %5 = "mlax.pow"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %6 = "mlax.max"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %7 = "mlax.min"(%i, %j) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
  %8 = "mlax.atan2"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %9 = "mlax.and"(%i, %j) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
  %10 = "mlax.or"(%i, %j) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
  %11 = "mlax.xor"(%i, %j) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
  %12 = "mlax.shift_left"(%i, %j) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
  %13 = "mlax.shift_right_logical"(%i, %j) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
  %14 = "mlax.shift_right_arithmetic"(%i, %j) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
  %15 = "mlax.nextafter"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// CHECK-LABEL: func.func @test_comparison(
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.compare"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {comparison_direction = "LT"} : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xi1>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.select"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<2x2xi1>, tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.clamp"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<f64>, tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
// CHECK-NEXT:    return
func.func @test_comparison(%x: tensor<2x2xf64>, %y: tensor<2x2xf64>, %lo: tensor<f64>) {
  %0 = "mlax.compare"(%x, %y) {comparison_direction = "LT"} : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xi1>
  %1 = "mlax.select"(%0, %x, %y) : (tensor<2x2xi1>, tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %2 = "mlax.clamp"(%lo, %x, %y) : (tensor<f64>, tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  return
}

// CHECK-LABEL: func.func @test_conversions(
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.convert"(%{{[a-z0-9_]+}}) {new_dtype = i8} : (tensor<4xf32>) -> tensor<4xi8>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.bitcast_convert"(%{{[a-z0-9_]+}}) {new_dtype = ui32} : (tensor<4xf32>) -> tensor<4xui32>
// CHECK-NEXT:    return
func.func @test_conversions(%x: tensor<4xf32>) {
  %0 = "mlax.convert"(%x) {new_dtype = i8} : (tensor<4xf32>) -> tensor<4xi8>
  %1 = "mlax.bitcast_convert"(%x) {new_dtype = ui32} : (tensor<4xf32>) -> tensor<4xui32>
  return
}

// CHECK-LABEL: func.func @test_shape(
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.broadcast_in_dim"(%{{[a-z0-9_]+}}) {broadcast_dimensions = array<i64: 1, 2>, shape = array<i64: 4, 2, 3>} : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.reshape"(%{{[a-z0-9_]+}}) {shape = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.transpose"(%{{[a-z0-9_]+}}) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.rev"(%{{[a-z0-9_]+}}) {dimensions = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.slice"(%{{[a-z0-9_]+}}) {limit_indices = array<i64: 2, 3>, start_indices = array<i64: 0, 1>, strides = array<i64: 1, 2>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.dynamic_slice"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {slice_sizes = array<i64: 1, 2>} : (tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.dynamic_update_slice"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<2x3xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.concatenate"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {dimension = 0 : i64} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.pad"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {edge_padding_high = array<i64: 0, -1>, edge_padding_low = array<i64: 1, 0>, interior_padding = array<i64: 1, 0>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x2xf32>
// CHECK-NEXT:    return
func.func @test_shape(%x: tensor<2x3xf32>, %s: tensor<i32>, %u: tensor<1x2xf32>, %v: tensor<1x3xf32>, %p: tensor<f32>) {
  %0 = "mlax.broadcast_in_dim"(%x) {shape = array<i64: 4, 2, 3>, broadcast_dimensions = array<i64: 1, 2>} : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
  %1 = "mlax.reshape"(%x) {shape = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %2 = "mlax.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %3 = "mlax.rev"(%x) {dimensions = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = "mlax.slice"(%x) {start_indices = array<i64: 0, 1>, limit_indices = array<i64: 2, 3>, strides = array<i64: 1, 2>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %5 = "mlax.dynamic_slice"(%x, %s, %s) {slice_sizes = array<i64: 1, 2>} : (tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
  %6 = "mlax.dynamic_update_slice"(%x, %u, %s, %s) : (tensor<2x3xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  %7 = "mlax.concatenate"(%x, %v) {dimension = 0 : i64} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
  %8 = "mlax.pad"(%x, %p) {edge_padding_low = array<i64: 1, 0>, edge_padding_high = array<i64: 0, -1>, interior_padding = array<i64: 1, 0>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x2xf32>
  return
}

// CHECK-LABEL: func.func @test_reductions(
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.reduce_sum"(%{{[a-z0-9_]+}}) {dimensions = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.reduce_prod"(%{{[a-z0-9_]+}}) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.reduce_max"(%{{[a-z0-9_]+}}) {dimensions = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.reduce_min"(%{{[a-z0-9_]+}}) {dimensions = array<i64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.reduce_and"(%{{[a-z0-9_]+}}) {dimensions = array<i64: 1>} : (tensor<2x3xi1>) -> tensor<2xi1>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.reduce_or"(%{{[a-z0-9_]+}}) {dimensions = array<i64: 1>} : (tensor<2x3xi1>) -> tensor<2xi1>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.argmax"(%{{[a-z0-9_]+}}) {axis = 1 : i64, index_dtype = i32} : (tensor<2x3xf32>) -> tensor<2xi32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.argmin"(%{{[a-z0-9_]+}}) {axis = 0 : i64, index_dtype = i64} : (tensor<2x3xf32>) -> tensor<3xi64>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.cumsum"(%{{[a-z0-9_]+}}) {axis = 1 : i64, reverse = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.cumprod"(%{{[a-z0-9_]+}}) {axis = 0 : i64, reverse = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.cummax"(%{{[a-z0-9_]+}}) {axis = 1 : i64, reverse = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.cummin"(%{{[a-z0-9_]+}}) {axis = 1 : i64, reverse = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    return
func.func @test_reductions(%x: tensor<2x3xf32>, %b: tensor<2x3xi1>) {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  %1 = "mlax.reduce_prod"(%x) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  %2 = "mlax.reduce_max"(%x) {dimensions = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  %3 = "mlax.reduce_min"(%x) {dimensions = array<i64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = "mlax.reduce_and"(%b) {dimensions = array<i64: 1>} : (tensor<2x3xi1>) -> tensor<2xi1>
  %5 = "mlax.reduce_or"(%b) {dimensions = array<i64: 1>} : (tensor<2x3xi1>) -> tensor<2xi1>
  %6 = "mlax.argmax"(%x) {axis = 1 : i64, index_dtype = i32} : (tensor<2x3xf32>) -> tensor<2xi32>
  %7 = "mlax.argmin"(%x) {axis = 0 : i64, index_dtype = i64} : (tensor<2x3xf32>) -> tensor<3xi64>
  %8 = "mlax.cumsum"(%x) {axis = 1 : i64, reverse = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = "mlax.cumprod"(%x) {axis = 0 : i64, reverse = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %10 = "mlax.cummax"(%x) {axis = 1 : i64, reverse = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %11 = "mlax.cummin"(%x) {axis = 1 : i64, reverse = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @test_linalg(
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.dot_general"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {lhs_batch_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, result_dtype = f32, rhs_batch_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
// CHECK-NEXT:    return %{{[a-z0-9_]+}} : tensor<5x2x4xf32>
func.func @test_linalg(%a: tensor<5x2x3xf32>, %b: tensor<5x3x4xf32>) -> tensor<5x2x4xf32> {
  %0 = "mlax.dot_general"(%a, %b) {lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>, lhs_batch_dimensions = array<i64: 0>, rhs_batch_dimensions = array<i64: 0>, result_dtype = f32} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  return %0 : tensor<5x2x4xf32>
}

// CHECK-LABEL: func.func @test_windowed(
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.conv_general_dilated"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {batch_group_count = 1 : i64, feature_group_count = 2 : i64, lhs_dilation = array<i64: 1>, lhs_spec = array<i64: 0, 2, 1>, out_spec = array<i64: 0, 2, 1>, padding = array<i64: 1, 0>, rhs_dilation = array<i64: 2>, rhs_spec = array<i64: 2, 1, 0>, window_strides = array<i64: 1>} : (tensor<2x5x4xf32>, tensor<3x2x6xf32>) -> tensor<2x2x6xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.reduce_window_sum"(%{{[a-z0-9_]+}}) {base_dilation = array<i64: 1, 1, 1>, padding = array<i64: 0, 0, 1, 1, 0, 0>, window_dilation = array<i64: 1, 1, 1>, window_dimensions = array<i64: 1, 2, 1>, window_strides = array<i64: 1, 2, 1>} : (tensor<2x5x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.reduce_window_max"(%{{[a-z0-9_]+}}) {base_dilation = array<i64: 1, 2, 1>, padding = array<i64: 0, 0, 0, 0, 0, 0>, window_dilation = array<i64: 1, 1, 2>, window_dimensions = array<i64: 1, 3, 2>, window_strides = array<i64: 1, 1, 1>} : (tensor<2x5x4xf32>) -> tensor<2x7x2xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.reduce_window_min"(%{{[a-z0-9_]+}}) {base_dilation = array<i64: 1, 1, 1>, padding = array<i64: 0, 0, -1, 0, 0, 0>, window_dilation = array<i64: 1, 1, 1>, window_dimensions = array<i64: 2, 2, 2>, window_strides = array<i64: 1, 1, 2>} : (tensor<2x5x4xf32>) -> tensor<1x3x2xf32>
// CHECK-NEXT:    return
func.func @test_windowed(%x: tensor<2x5x4xf32>, %w: tensor<3x2x6xf32>) {
  %0 = "mlax.conv_general_dilated"(%x, %w) {window_strides = array<i64: 1>, padding = array<i64: 1, 0>, lhs_dilation = array<i64: 1>, rhs_dilation = array<i64: 2>, lhs_spec = array<i64: 0, 2, 1>, rhs_spec = array<i64: 2, 1, 0>, out_spec = array<i64: 0, 2, 1>, feature_group_count = 2 : i64, batch_group_count = 1 : i64} : (tensor<2x5x4xf32>, tensor<3x2x6xf32>) -> tensor<2x2x6xf32>
  %1 = "mlax.reduce_window_sum"(%x) {window_dimensions = array<i64: 1, 2, 1>, window_strides = array<i64: 1, 2, 1>, padding = array<i64: 0, 0, 1, 1, 0, 0>, base_dilation = array<i64: 1, 1, 1>, window_dilation = array<i64: 1, 1, 1>} : (tensor<2x5x4xf32>) -> tensor<2x3x4xf32>
  %2 = "mlax.reduce_window_max"(%x) {window_dimensions = array<i64: 1, 3, 2>, window_strides = array<i64: 1, 1, 1>, padding = array<i64: 0, 0, 0, 0, 0, 0>, base_dilation = array<i64: 1, 2, 1>, window_dilation = array<i64: 1, 1, 2>} : (tensor<2x5x4xf32>) -> tensor<2x7x2xf32>
  %3 = "mlax.reduce_window_min"(%x) {window_dimensions = array<i64: 2, 2, 2>, window_strides = array<i64: 1, 1, 2>, padding = array<i64: 0, 0, -1, 0, 0, 0>, base_dilation = array<i64: 1, 1, 1>, window_dilation = array<i64: 1, 1, 1>} : (tensor<2x5x4xf32>) -> tensor<1x3x2xf32>
  return
}

// CHECK-LABEL: func.func @test_indexing(
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.gather"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {collapsed_slice_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "clip", offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, slice_sizes = array<i64: 1, 3>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>} : (tensor<4x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.scatter"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {index_vector_dim = 1 : i64, input_batching_dims = array<i64>, inserted_window_dims = array<i64: 0>, mode = "fill", scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>} : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.scatter_add"(
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.scatter_mul"(
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.scatter_min"(
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.scatter_max"(
func.func @test_indexing(%x: tensor<4x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = "mlax.gather"(%x, %i) {offset_dims = array<i64: 1>, collapsed_slice_dims = array<i64: 0>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1, 3>, mode = "clip"} : (tensor<4x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
  %1 = "mlax.scatter"(%x, %i, %u) {update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "fill"} : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %2 = "mlax.scatter_add"(%x, %i, %u) {update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "fill"} : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %3 = "mlax.scatter_mul"(%x, %i, %u) {update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "clip"} : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %4 = "mlax.scatter_min"(%x, %i, %u) {update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "promise_in_bounds"} : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %5 = "mlax.scatter_max"(%x, %i, %u) {update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "fill"} : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}


// CHECK-LABEL: func.func @test_sorting(
// CHECK-NEXT:    %[[P:[a-z0-9_]+]] = "mlax.sort_permutation"(%{{[a-z0-9_]+}}) {dimension = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.apply_permutation"(%{{[a-z0-9_]+}}, %[[P]]) {dimension = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}}:2 = "mlax.top_k"(%{{[a-z0-9_]+}}) {k = 2 : i64} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>)
func.func @test_sorting(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x2xi32>) {
  %0 = "mlax.sort_permutation"(%x) {dimension = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %1 = "mlax.apply_permutation"(%x, %0) {dimension = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<2x3xf32>
  %2:2 = "mlax.top_k"(%x) {k = 2 : i64} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>)
  return %1, %2#0, %2#1 : tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x2xi32>
}

// CHECK-LABEL: func.func @test_sharding
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.sharding_constraint"(%{{[a-z0-9_]+}}) {sharding = {{\[}}["x"], []]} : (tensor<8x4xf32>) -> tensor<8x4xf32>
func.func @test_sharding(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = "mlax.sharding_constraint"(%x) {sharding = [["x"], []]} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// CHECK-LABEL: func.func @test_collectives
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.psum"(%{{[a-z0-9_]+}}) {axes = ["i"]} : (tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.pmax"(%{{[a-z0-9_]+}}) {axes = ["i", "j"]} : (tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.pmin"(%{{[a-z0-9_]+}}) {axes = ["j"]} : (tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.all_gather"(%{{[a-z0-9_]+}}) {axes = ["i"], axis_size = 2 : i64, dimension = 0 : i64} : (tensor<4x2xf32>) -> tensor<8x2xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.psum_scatter"(%{{[a-z0-9_]+}}) {axes = ["i"], axis_size = 2 : i64, dimension = 0 : i64} : (tensor<4x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.all_to_all"(%{{[a-z0-9_]+}}) {axes = ["i"], axis_size = 2 : i64, concat_dimension = 1 : i64, split_dimension = 0 : i64} : (tensor<4x2xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.ppermute"(%{{[a-z0-9_]+}}) {axes = ["i"], pairs = array<i64: 0, 1, 1, 0>} : (tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    %{{[a-z0-9_]+}} = "mlax.axis_index"() {axes = ["i", "j"], axis_size = 6 : i64} : () -> tensor<i32>
func.func @test_collectives(%x: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<8x2xf32>, tensor<2x2xf32>, tensor<2x4xf32>, tensor<4x2xf32>, tensor<i32>) {
  %0 = "mlax.psum"(%x) {axes = ["i"]} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %1 = "mlax.pmax"(%x) {axes = ["i", "j"]} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %2 = "mlax.pmin"(%x) {axes = ["j"]} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %3 = "mlax.all_gather"(%x) {axes = ["i"], dimension = 0 : i64, axis_size = 2 : i64} : (tensor<4x2xf32>) -> tensor<8x2xf32>
  %4 = "mlax.psum_scatter"(%x) {axes = ["i"], dimension = 0 : i64, axis_size = 2 : i64} : (tensor<4x2xf32>) -> tensor<2x2xf32>
  %5 = "mlax.all_to_all"(%x) {axes = ["i"], split_dimension = 0 : i64, concat_dimension = 1 : i64, axis_size = 2 : i64} : (tensor<4x2xf32>) -> tensor<2x4xf32>
  %6 = "mlax.ppermute"(%x) {axes = ["i"], pairs = array<i64: 0, 1, 1, 0>} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %7 = "mlax.axis_index"() {axes = ["i", "j"], axis_size = 6 : i64} : () -> tensor<i32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<8x2xf32>, tensor<2x2xf32>, tensor<2x4xf32>, tensor<4x2xf32>, tensor<i32>
}

// CHECK-LABEL: func.func @test_complex_parts(
// CHECK-NEXT:    %[[Z:.*]] = "mlax.complex"(%{{.*}}, %{{.*}}) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xcomplex<f32>>
// CHECK-NEXT:    %[[C:.*]] = "mlax.conj"(%[[Z]]) : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
// CHECK-NEXT:    %{{.*}} = "mlax.real"(%[[C]]) : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
// CHECK-NEXT:    %{{.*}} = "mlax.imag"(%[[C]]) : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
func.func @test_complex_parts(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = "mlax.complex"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xcomplex<f32>>
  %1 = "mlax.conj"(%0) : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
  %2 = "mlax.real"(%1) : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
  %3 = "mlax.imag"(%1) : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
  return %2, %3 : tensor<3xf32>, tensor<3xf32>
}

// fft: jax's kind and the trailing lengths; RFFT keeps n // 2 + 1 frequencies of the last axis.
// CHECK-LABEL: func.func @test_fft(
// CHECK-NEXT:    %{{.*}} = "mlax.fft"(%{{.*}}) {fft_lengths = array<i64: 4, 6>, fft_type = "RFFT"} : (tensor<2x4x6xf32>) -> tensor<2x4x4xcomplex<f32>>
func.func @test_fft(%x: tensor<2x4x6xf32>) -> tensor<2x4x4xcomplex<f32>> {
  %0 = "mlax.fft"(%x) {fft_lengths = array<i64: 4, 6>, fft_type = "RFFT"} : (tensor<2x4x6xf32>) -> tensor<2x4x4xcomplex<f32>>
  return %0 : tensor<2x4x4xcomplex<f32>>
}

// The decompositions, batched or not: cholesky keeps its type, triangular_solve carries jax's
// five flags and takes b's type, lu has three results (the factors, then i32 pivots of the
// smaller dimension and an i32 permutation of the rows).
// CHECK-LABEL: func.func @test_cholesky(
// CHECK-NEXT:    %{{.*}} = "mlax.cholesky"(%{{.*}}) : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
func.func @test_cholesky(%a: tensor<2x3x3xf32>) -> tensor<2x3x3xf32> {
  %0 = "mlax.cholesky"(%a) : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  return %0 : tensor<2x3x3xf32>
}

// CHECK-LABEL: func.func @test_triangular_solve(
// CHECK-NEXT:    %{{.*}} = "mlax.triangular_solve"(%{{.*}}, %{{.*}}) {conjugate_a = false, left_side = false, lower = true, transpose_a = true, unit_diagonal = true} : (tensor<3x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
func.func @test_triangular_solve(%a: tensor<3x3xf64>, %b: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %0 = "mlax.triangular_solve"(%a, %b) {conjugate_a = false, left_side = false, lower = true, transpose_a = true, unit_diagonal = true} : (tensor<3x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}

// CHECK-LABEL: func.func @test_lu(
// CHECK-NEXT:    %{{.*}}:3 = "mlax.lu"(%{{.*}}) : (tensor<5x4x3xf32>) -> (tensor<5x4x3xf32>, tensor<5x3xi32>, tensor<5x4xi32>)
func.func @test_lu(%a: tensor<5x4x3xf32>) -> (tensor<5x4x3xf32>, tensor<5x3xi32>, tensor<5x4xi32>) {
  %0:3 = "mlax.lu"(%a) : (tensor<5x4x3xf32>) -> (tensor<5x4x3xf32>, tensor<5x3xi32>, tensor<5x4xi32>)
  return %0#0, %0#1, %0#2 : tensor<5x4x3xf32>, tensor<5x3xi32>, tensor<5x4xi32>
}

// qr: Q (m x k) and R (k x n), k = m with full_matrices; eigh: V and the eigenvalues; svd: s,
// u and vh (empty 0 x 0 without compute_uv).
// CHECK-LABEL: func.func @test_qr(
// CHECK-NEXT:    %{{.*}}:2 = "mlax.qr"(%{{.*}}) {full_matrices = true, pivoting = false} : (tensor<2x5x3xf32>) -> (tensor<2x5x5xf32>, tensor<2x5x3xf32>)
func.func @test_qr(%a: tensor<2x5x3xf32>) -> (tensor<2x5x5xf32>, tensor<2x5x3xf32>) {
  %0:2 = "mlax.qr"(%a) {full_matrices = true, pivoting = false} : (tensor<2x5x3xf32>) -> (tensor<2x5x5xf32>, tensor<2x5x3xf32>)
  return %0#0, %0#1 : tensor<2x5x5xf32>, tensor<2x5x3xf32>
}

// qr with pivoting: a third result, the i32 column permutation (..., n).
// CHECK-LABEL: func.func @test_qr_pivoting(
// CHECK-NEXT:    %{{.*}}:3 = "mlax.qr"(%{{.*}}) {full_matrices = false, pivoting = true} : (tensor<3x5xf64>) -> (tensor<3x3xf64>, tensor<3x5xf64>, tensor<5xi32>)
func.func @test_qr_pivoting(%a: tensor<3x5xf64>) -> (tensor<3x3xf64>, tensor<3x5xf64>, tensor<5xi32>) {
  %0:3 = "mlax.qr"(%a) {full_matrices = false, pivoting = true} : (tensor<3x5xf64>) -> (tensor<3x3xf64>, tensor<3x5xf64>, tensor<5xi32>)
  return %0#0, %0#1, %0#2 : tensor<3x3xf64>, tensor<3x5xf64>, tensor<5xi32>
}

// CHECK-LABEL: func.func @test_eigh(
// CHECK-NEXT:    %{{.*}}:2 = "mlax.eigh"(%{{.*}}) {lower = true, sort_eigenvalues = true} : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xf64>)
func.func @test_eigh(%a: tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xf64>) {
  %0:2 = "mlax.eigh"(%a) {lower = true, sort_eigenvalues = true} : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xf64>)
  return %0#0, %0#1 : tensor<4x4xf64>, tensor<4xf64>
}

// CHECK-LABEL: func.func @test_svd(
// CHECK-NEXT:    %{{.*}}:3 = "mlax.svd"(%{{.*}}) {compute_uv = true, full_matrices = false} : (tensor<3x5xf32>) -> (tensor<3xf32>, tensor<3x3xf32>, tensor<3x5xf32>)
func.func @test_svd(%a: tensor<3x5xf32>) -> (tensor<3xf32>, tensor<3x3xf32>, tensor<3x5xf32>) {
  %0:3 = "mlax.svd"(%a) {compute_uv = true, full_matrices = false} : (tensor<3x5xf32>) -> (tensor<3xf32>, tensor<3x3xf32>, tensor<3x5xf32>)
  return %0#0, %0#1, %0#2 : tensor<3xf32>, tensor<3x3xf32>, tensor<3x5xf32>
}

// eig: complex eigenvalues, then the left and right eigenvectors asked for (1 to 3 results).
// CHECK-LABEL: func.func @test_eig(
// CHECK-NEXT:    %{{.*}}:3 = "mlax.eig"(%{{.*}}) {compute_left_eigenvectors = true, compute_right_eigenvectors = true, enable_eigvec_derivs = false} : (tensor<2x3x3xf32>) -> (tensor<2x3xcomplex<f32>>, tensor<2x3x3xcomplex<f32>>, tensor<2x3x3xcomplex<f32>>)
func.func @test_eig(%a: tensor<2x3x3xf32>) -> (tensor<2x3xcomplex<f32>>, tensor<2x3x3xcomplex<f32>>, tensor<2x3x3xcomplex<f32>>) {
  %0:3 = "mlax.eig"(%a) {compute_left_eigenvectors = true, compute_right_eigenvectors = true, enable_eigvec_derivs = false} : (tensor<2x3x3xf32>) -> (tensor<2x3xcomplex<f32>>, tensor<2x3x3xcomplex<f32>>, tensor<2x3x3xcomplex<f32>>)
  return %0#0, %0#1, %0#2 : tensor<2x3xcomplex<f32>>, tensor<2x3x3xcomplex<f32>>, tensor<2x3x3xcomplex<f32>>
}

// schur: T, then Z when compute_schur_vectors (the operand's type and shape).
// CHECK-LABEL: func.func @test_schur(
// CHECK-NEXT:    %{{.*}}:2 = "mlax.schur"(%{{.*}}) {compute_schur_vectors = true} : (tensor<2x3x3xcomplex<f64>>) -> (tensor<2x3x3xcomplex<f64>>, tensor<2x3x3xcomplex<f64>>)
func.func @test_schur(%a: tensor<2x3x3xcomplex<f64>>) -> (tensor<2x3x3xcomplex<f64>>, tensor<2x3x3xcomplex<f64>>) {
  %0:2 = "mlax.schur"(%a) {compute_schur_vectors = true} : (tensor<2x3x3xcomplex<f64>>) -> (tensor<2x3x3xcomplex<f64>>, tensor<2x3x3xcomplex<f64>>)
  return %0#0, %0#1 : tensor<2x3x3xcomplex<f64>>, tensor<2x3x3xcomplex<f64>>
}

// The Householder reductions: geqrf (packed a, taus), householder_product, geqp3 (a, pivots, taus), hessenberg (a, taus of
// n - 1), tridiagonal (a, real d and e, taus).
// CHECK-LABEL: func.func @test_householder(
// CHECK-NEXT:    %{{.*}}:2 = "mlax.geqrf"(%{{.*}}) : (tensor<2x5x3xf32>) -> (tensor<2x5x3xf32>, tensor<2x3xf32>)
// CHECK-NEXT:    %{{.*}} = "mlax.householder_product"(%{{.*}}, %{{.*}}) : (tensor<2x5x3xf32>, tensor<2x3xf32>) -> tensor<2x5x3xf32>
// CHECK-NEXT:    %{{.*}}:3 = "mlax.geqp3"(%{{.*}}, %{{.*}}) : (tensor<2x5x3xf32>, tensor<2x3xi32>) -> (tensor<2x5x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>)
// CHECK-NEXT:    %{{.*}}:2 = "mlax.hessenberg"(%{{.*}}) : (tensor<4x4xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>>, tensor<3xcomplex<f32>>)
// CHECK-NEXT:    %{{.*}}:4 = "mlax.tridiagonal"(%{{.*}}) {lower = false} : (tensor<4x4xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>>, tensor<4xf32>, tensor<3xf32>, tensor<3xcomplex<f32>>)
func.func @test_householder(%a: tensor<2x5x3xf32>, %s: tensor<4x4xcomplex<f32>>, %p: tensor<2x3xi32>) -> (tensor<2x5x3xf32>, tensor<3xcomplex<f32>>, tensor<3xf32>) {
  %0:2 = "mlax.geqrf"(%a) : (tensor<2x5x3xf32>) -> (tensor<2x5x3xf32>, tensor<2x3xf32>)
  %1 = "mlax.householder_product"(%0#0, %0#1) : (tensor<2x5x3xf32>, tensor<2x3xf32>) -> tensor<2x5x3xf32>
  %4:3 = "mlax.geqp3"(%a, %p) : (tensor<2x5x3xf32>, tensor<2x3xi32>) -> (tensor<2x5x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>)
  %2:2 = "mlax.hessenberg"(%s) : (tensor<4x4xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>>, tensor<3xcomplex<f32>>)
  %3:4 = "mlax.tridiagonal"(%s) {lower = false} : (tensor<4x4xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>>, tensor<4xf32>, tensor<3xf32>, tensor<3xcomplex<f32>>)
  return %1, %2#1, %3#2 : tensor<2x5x3xf32>, tensor<3xcomplex<f32>>, tensor<3xf32>
}

// ormqr: Q c (left) or c Q^H from geqrf's reflectors, c's shape.
// CHECK-LABEL: func.func @test_ormqr(
// CHECK-NEXT:    %{{.*}} = "mlax.ormqr"(%{{.*}}, %{{.*}}, %{{.*}}) {left = true, transpose = false} : (tensor<2x5x3xf32>, tensor<2x3xf32>, tensor<2x5x4xf32>) -> tensor<2x5x4xf32>
// CHECK-NEXT:    %{{.*}} = "mlax.ormqr"(%{{.*}}, %{{.*}}, %{{.*}}) {left = false, transpose = true} : (tensor<4x4xcomplex<f64>>, tensor<2xcomplex<f64>>, tensor<3x4xcomplex<f64>>) -> tensor<3x4xcomplex<f64>>
func.func @test_ormqr(%a: tensor<2x5x3xf32>, %t: tensor<2x3xf32>, %c: tensor<2x5x4xf32>, %b: tensor<4x4xcomplex<f64>>, %u: tensor<2xcomplex<f64>>, %d: tensor<3x4xcomplex<f64>>) -> (tensor<2x5x4xf32>, tensor<3x4xcomplex<f64>>) {
  %0 = "mlax.ormqr"(%a, %t, %c) {left = true, transpose = false} : (tensor<2x5x3xf32>, tensor<2x3xf32>, tensor<2x5x4xf32>) -> tensor<2x5x4xf32>
  %1 = "mlax.ormqr"(%b, %u, %d) {left = false, transpose = true} : (tensor<4x4xcomplex<f64>>, tensor<2xcomplex<f64>>, tensor<3x4xcomplex<f64>>) -> tensor<3x4xcomplex<f64>>
  return %0, %1 : tensor<2x5x4xf32>, tensor<3x4xcomplex<f64>>
}
