// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null
// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s --check-prefix=SIGNLESS

// Unsigned types choose the unsigned arith variants, then every uiN becomes iN with the same
// bits: function signatures, block arguments, constants. No cast is left behind.
// SIGNLESS-NOT: ui{{[0-9]}}
// SIGNLESS-NOT: unrealized_conversion_cast

// CHECK-LABEL: func.func @test_signature_and_constant
// CHECK-SAME:    (%[[X:.*]]: tensor<3xi32>) -> tensor<3xi32>
// CHECK:         %[[C:.*]] = arith.constant dense<[1, -1, -2147483648]> : tensor<3xi32>
// CHECK:         linalg.generic {{.*}} ins(%[[X]], %[[C]] : tensor<3xi32>, tensor<3xi32>)
// CHECK:         ^bb0(%{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32):
func.func @test_signature_and_constant(%x: tensor<3xui32>) -> tensor<3xui32> {
  %c = "mlax.constant"() {value = dense<[1, 4294967295, 2147483648]> : tensor<3xui32>} : () -> tensor<3xui32>
  %0 = "mlax.add"(%x, %c) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
  return %0 : tensor<3xui32>
}

// x / 0 is all ones and x % 0 is x; no -1 divisor case.
// CHECK-LABEL: func.func @test_div_rem
// CHECK:         %[[ZERO:.*]] = arith.cmpi eq, %[[Y:.*]], %c0_i8
// CHECK:         %[[SAFE:.*]] = arith.select %[[ZERO]], %c1_i8{{.*}}, %[[Y]]
// CHECK:         %[[Q:.*]] = arith.divui %{{.*}}, %[[SAFE]] : i8
// CHECK:         arith.select %[[ZERO]], %c-1_i8, %[[Q]]
// CHECK:         arith.remui
func.func @test_div_rem(%x: tensor<4xui8>, %y: tensor<4xui8>) -> tensor<4xui8> {
  %0 = "mlax.div"(%x, %y) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = "mlax.rem"(%0, %y) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %1 : tensor<4xui8>
}

// max/min are maxui/minui; sign is x != 0; pow runs the exponent's 16 bits.
// CHECK-LABEL: func.func @test_max_min_sign_pow
// CHECK:         arith.maxui
// CHECK:         arith.minui
// CHECK:         %[[NZ:.*]] = arith.cmpi ne
// CHECK:         arith.extui %[[NZ]] : i1 to i16
// CHECK:         scf.for %{{.*}} = %c0 to %c16 step %c1
func.func @test_max_min_sign_pow(%x: tensor<4xui16>, %y: tensor<4xui16>) -> tensor<4xui16> {
  %0 = "mlax.max"(%x, %y) : (tensor<4xui16>, tensor<4xui16>) -> tensor<4xui16>
  %1 = "mlax.min"(%0, %y) : (tensor<4xui16>, tensor<4xui16>) -> tensor<4xui16>
  %2 = "mlax.sign"(%1) : (tensor<4xui16>) -> tensor<4xui16>
  %3 = "mlax.pow"(%2, %y) : (tensor<4xui16>, tensor<4xui16>) -> tensor<4xui16>
  return %3 : tensor<4xui16>
}

// Unsigned sources zero-extend and convert with uitofp; signed sources sign-extend into an
// unsigned target; float -> unsigned saturates to [0, 2^n - 1] around fptoui.
// CHECK-LABEL: func.func @test_convert
// CHECK:         arith.extui %{{.*}} : i8 to i32
// CHECK:         arith.extsi %{{.*}} : i8 to i64
// CHECK:         arith.uitofp %{{.*}} : i8 to f32
// CHECK:         %[[LOW:.*]] = arith.cmpf olt, %[[F:.*]], %cst
// CHECK:         %[[HIGH:.*]] = arith.cmpf oge, %[[F]], %cst
// CHECK:         %[[I:.*]] = arith.fptoui %{{.*}} : f32 to i8
// CHECK:         %[[H:.*]] = arith.select %[[HIGH]], %c-1_i8, %[[I]]
// CHECK:         arith.select %[[LOW]], %c0_i8, %[[H]]
func.func @test_convert(%u: tensor<4xui8>, %i: tensor<4xi8>, %f: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xui64>, tensor<4xf32>, tensor<4xui8>) {
  %0 = "mlax.convert"(%u) {new_dtype = i32} : (tensor<4xui8>) -> tensor<4xi32>
  %1 = "mlax.convert"(%i) {new_dtype = ui64} : (tensor<4xi8>) -> tensor<4xui64>
  %2 = "mlax.convert"(%u) {new_dtype = f32} : (tensor<4xui8>) -> tensor<4xf32>
  %3 = "mlax.convert"(%f) {new_dtype = ui8} : (tensor<4xf32>) -> tensor<4xui8>
  return %0, %1, %2, %3 : tensor<4xi32>, tensor<4xui64>, tensor<4xf32>, tensor<4xui8>
}

// reduce_max of unsigned starts at 0; reduce_min at all ones.
// CHECK-LABEL: func.func @test_reduce
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK:         linalg.fill ins(%[[ZERO]] : i32)
// CHECK:           arith.maxui
// CHECK:         %[[ONES:.*]] = arith.constant -1 : i32
// CHECK:         linalg.fill ins(%[[ONES]] : i32)
// CHECK:           arith.minui
func.func @test_reduce(%x: tensor<2x3xui32>) -> (tensor<2xui32>, tensor<2xui32>) {
  %0 = "mlax.reduce_max"(%x) {dimensions = array<i64: 1>} : (tensor<2x3xui32>) -> tensor<2xui32>
  %1 = "mlax.reduce_min"(%x) {dimensions = array<i64: 1>} : (tensor<2x3xui32>) -> tensor<2xui32>
  return %0, %1 : tensor<2xui32>, tensor<2xui32>
}

// A function without mlax ops is retyped too.
// CHECK-LABEL: func.func @test_no_ops
// CHECK-SAME:    (%[[A:.*]]: tensor<2xi16>) -> tensor<2xi16>
// CHECK-NEXT:    return %[[A]] : tensor<2xi16>
func.func @test_no_ops(%x: tensor<2xui16>) -> tensor<2xui16> {
  return %x : tensor<2xui16>
}

// Calls between functions are retyped on both sides.
// CHECK-LABEL: func.func @test_call
// CHECK:         %[[R:.*]] = call @test_no_ops(%{{.*}}) : (tensor<2xi16>) -> tensor<2xi16>
// CHECK:         linalg.generic {{.*}} ins(%[[R]], %{{.*}} : tensor<2xi16>, tensor<2xi16>)
// CHECK:           arith.shrui
func.func @test_call(%x: tensor<2xui16>) -> tensor<2xui16> {
  %0 = call @test_no_ops(%x) : (tensor<2xui16>) -> tensor<2xui16>
  %c = "mlax.constant"() {value = dense<3> : tensor<2xui16>} : () -> tensor<2xui16>
  %1 = "mlax.shift_right_logical"(%0, %c) : (tensor<2xui16>, tensor<2xui16>) -> tensor<2xui16>
  return %1 : tensor<2xui16>
}
