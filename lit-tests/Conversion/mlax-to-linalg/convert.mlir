// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null

// CHECK:       #[[$DROP:.*]] = affine_map<(d0, d1) -> (d0)>

// Float -> int saturates and maps NaN to 0: fptosi only sees in-range values (others are
// replaced by 0.0 first), the bounds are selected afterwards.
// CHECK-LABEL: func.func @test_float_to_int
// CHECK:         %[[LOW:.*]] = arith.cmpf olt, %[[X:.*]], %cst
// CHECK:         %[[HIGH:.*]] = arith.cmpf oge, %[[X]], %cst
// CHECK:         %[[SAFE:.*]] = arith.select %{{.*}}, %[[X]], %{{.*}} : f32
// CHECK:         %[[I:.*]] = arith.fptosi %[[SAFE]] : f32 to i32
// CHECK:         %[[HI:.*]] = arith.select %[[HIGH]], %c2147483647_i32, %[[I]]
// CHECK:         arith.select %[[LOW]], %c-2147483648_i32, %[[HI]]
func.func @test_float_to_int(%x: tensor<4xf32>) -> tensor<4xi32> {
  %0 = "mlax.convert"(%x) {new_dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// Any -> i1 is x != 0 (NaN -> true: unordered not-equal).
// CHECK-LABEL: func.func @test_to_bool
// CHECK:         arith.cmpf une
// CHECK:         arith.cmpi ne
func.func @test_to_bool(%x: tensor<4xf32>, %i: tensor<4xi8>) -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = "mlax.convert"(%x) {new_dtype = i1} : (tensor<4xf32>) -> tensor<4xi1>
  %1 = "mlax.convert"(%i) {new_dtype = i1} : (tensor<4xi8>) -> tensor<4xi1>
  return %0, %1 : tensor<4xi1>, tensor<4xi1>
}

// i1 -> number is 0 or 1 (unsigned), other integers extend signed or wrap.
// CHECK-LABEL: func.func @test_int_conversions
// CHECK:         arith.uitofp %{{.*}} : i1 to f32
// CHECK:         arith.extsi %{{.*}} : i8 to i64
// CHECK:         arith.trunci %{{.*}} : i64 to i8
func.func @test_int_conversions(%b: tensor<4xi1>, %i: tensor<4xi8>) -> (tensor<4xf32>, tensor<4xi8>) {
  %0 = "mlax.convert"(%b) {new_dtype = f32} : (tensor<4xi1>) -> tensor<4xf32>
  %1 = "mlax.convert"(%i) {new_dtype = i64} : (tensor<4xi8>) -> tensor<4xi64>
  %2 = "mlax.convert"(%1) {new_dtype = i8} : (tensor<4xi64>) -> tensor<4xi8>
  return %0, %2 : tensor<4xf32>, tensor<4xi8>
}

// To f16 from f64 or an integer goes through f32 (as XLA's CPU).
// CHECK-LABEL: func.func @test_to_half
// CHECK:         %[[W:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK:         arith.truncf %[[W]] : f32 to f16
// CHECK:         %[[F:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK:         arith.truncf %[[F]] : f32 to f16
func.func @test_to_half(%x: tensor<4xf64>, %i: tensor<4xi32>) -> (tensor<4xf16>, tensor<4xf16>) {
  %0 = "mlax.convert"(%x) {new_dtype = f16} : (tensor<4xf64>) -> tensor<4xf16>
  %1 = "mlax.convert"(%i) {new_dtype = f16} : (tensor<4xi32>) -> tensor<4xf16>
  return %0, %1 : tensor<4xf16>, tensor<4xf16>
}

// bitcast_convert of one width is arith.bitcast (iN <-> uiN keeps the value as it is).
// CHECK-LABEL: func.func @test_bitcast_same_width
// CHECK:         arith.bitcast %{{.*}} : f32 to i32
// CHECK:         ^bb0(%[[U:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT:      linalg.yield %[[U]] : i32
func.func @test_bitcast_same_width(%x: tensor<2xf32>, %u: tensor<2xui32>) -> (tensor<2xi32>, tensor<2xi32>) {
  %0 = "mlax.bitcast_convert"(%x) {new_dtype = i32} : (tensor<2xf32>) -> tensor<2xi32>
  %1 = "mlax.bitcast_convert"(%u) {new_dtype = i32} : (tensor<2xui32>) -> tensor<2xi32>
  return %0, %1 : tensor<2xi32>, tensor<2xi32>
}

// To a narrower type: a new minor dimension (the operand map drops it); element j holds
// bits j * 16 and up.
// CHECK-LABEL: func.func @test_bitcast_narrower
// CHECK:         linalg.generic {indexing_maps = [#[[$DROP]], {{.*}}]{{.*}} outs(%{{.*}} : tensor<2x2xf16>)
// CHECK:           %[[B:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK:           %[[J:.*]] = linalg.index 1
// CHECK:           %[[JI:.*]] = arith.index_cast %[[J]] : index to i32
// CHECK:           %[[AMOUNT:.*]] = arith.muli %[[JI]], %c16_i32
// CHECK:           %[[S:.*]] = arith.shrui %[[B]], %[[AMOUNT]]
// CHECK:           %[[T:.*]] = arith.trunci %[[S]] : i32 to i16
// CHECK:           arith.bitcast %[[T]] : i16 to f16
func.func @test_bitcast_narrower(%x: tensor<2xf32>) -> tensor<2x2xf16> {
  %0 = "mlax.bitcast_convert"(%x) {new_dtype = f16} : (tensor<2xf32>) -> tensor<2x2xf16>
  return %0 : tensor<2x2xf16>
}

// To a wider type: the minor dimension's elements, extended, shifted and or-ed.
// CHECK-LABEL: func.func @test_bitcast_wider
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<3xf32>)
// CHECK:           %[[E0:.*]] = tensor.extract %arg0[%{{.*}}, %c0] : tensor<3x2xi16>
// CHECK:           %[[W0:.*]] = arith.extui %[[E0]] : i16 to i32
// CHECK:           %[[E1:.*]] = tensor.extract %arg0[%{{.*}}, %c1] : tensor<3x2xi16>
// CHECK:           %[[W1:.*]] = arith.extui %[[E1]] : i16 to i32
// CHECK:           %[[S1:.*]] = arith.shli %[[W1]], %c16_i32
// CHECK:           %[[OR:.*]] = arith.ori %[[W0]], %[[S1]]
// CHECK:           arith.bitcast %[[OR]] : i32 to f32
func.func @test_bitcast_wider(%x: tensor<3x2xui16>) -> tensor<3xf32> {
  %0 = "mlax.bitcast_convert"(%x) {new_dtype = f32} : (tensor<3x2xui16>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
