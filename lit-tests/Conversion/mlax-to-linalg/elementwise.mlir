// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null

// Unary and binary elementwise ops become one linalg.generic over a fresh tensor.empty,
// with arith/math in the body.

// CHECK-LABEL: func.func @test_add_float
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%arg0, %arg1 : tensor<2x3xf32>, tensor<2x3xf32>) outs(%[[E]] : tensor<2x3xf32>)
// CHECK:           arith.addf
// CHECK-NOT:     mlax.
func.func @test_add_float(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "mlax.add"(%x, %y) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// Booleans: add is or, mul is and.
// CHECK-LABEL: func.func @test_add_mul_bool
// CHECK:         arith.ori
// CHECK:         arith.andi
func.func @test_add_mul_bool(%x: tensor<4xi1>, %y: tensor<4xi1>) -> tensor<4xi1> {
  %0 = "mlax.add"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %1 = "mlax.mul"(%0, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %1 : tensor<4xi1>
}

// Integer division: divsi only sees a divisor that is neither 0 nor -1; those are selected
// afterwards (x / 0 = -1, x / -1 = 0 - x, which wraps INT_MIN).
// CHECK-LABEL: func.func @test_div_int
// CHECK:         %[[ZERO:.*]] = arith.cmpi eq, %[[Y:.*]], %c0_i32
// CHECK:         %[[MONE:.*]] = arith.cmpi eq, %[[Y]], %c-1_i32
// CHECK:         %[[BAD:.*]] = arith.ori %[[ZERO]], %[[MONE]]
// CHECK:         %[[SAFE:.*]] = arith.select %[[BAD]], %c1_i32{{.*}}, %[[Y]]
// CHECK:         %[[NEG:.*]] = arith.subi
// CHECK:         %[[Q:.*]] = arith.divsi %{{.*}}, %[[SAFE]]
// CHECK:         %[[Q2:.*]] = arith.select %[[MONE]], %[[NEG]], %[[Q]]
// CHECK:         arith.select %[[ZERO]], %c-1_i32{{.*}}, %[[Q2]]
func.func @test_div_int(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "mlax.div"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// IEEE 754-2019 maximum/minimum (maximumf / minimumf): NaN propagates and
// max(-0, +0) = +0, min(-0, +0) = -0 in either order, as XLA.
// CHECK-LABEL: func.func @test_max_min_float
// CHECK:         ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[MAX:.*]] = arith.maximumf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      linalg.yield %[[MAX]] : f32
// CHECK:           arith.minimumf
func.func @test_max_min_float(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "mlax.max"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "mlax.min"(%0, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// Shifts: an amount >= the bit width (compared unsigned) gives 0.
// CHECK-LABEL: func.func @test_shift_left
// CHECK:         %[[OUT:.*]] = arith.cmpi uge, %{{.*}}, %c32_i32
// CHECK:         %[[AMOUNT:.*]] = arith.select %[[OUT]]
// CHECK:         %[[S:.*]] = arith.shli %{{.*}}, %[[AMOUNT]]
// CHECK:         arith.select %[[OUT]], %{{.*}}, %[[S]]
func.func @test_shift_left(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "mlax.shift_left"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// Round half away from zero is math.round; to_nearest_even is math.roundeven.
// CHECK-LABEL: func.func @test_round
// CHECK:         math.round
// CHECK:         math.roundeven
func.func @test_round(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "mlax.round"(%x) {rounding_method = "away_from_zero"} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "mlax.round"(%0) {rounding_method = "to_nearest_even"} : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// Transcendentals on f16 compute in f32 and round once.
// CHECK-LABEL: func.func @test_exp_f16
// CHECK:         %[[W:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK:         %[[E:.*]] = math.exp %[[W]] : f32
// CHECK:         arith.truncf %[[E]] : f32 to f16
func.func @test_exp_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "mlax.exp"(%x) : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// Rank 0 and size 0 tensors lower the same way (no iterators for rank 0).
// CHECK-LABEL: func.func @test_rank0_and_empty
// CHECK:         linalg.generic {{.*}}iterator_types = []
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<0x3xi32>)
func.func @test_rank0_and_empty(%x: tensor<f32>, %y: tensor<0x3xi32>) -> (tensor<f32>, tensor<0x3xi32>) {
  %0 = "mlax.neg"(%x) : (tensor<f32>) -> tensor<f32>
  %1 = "mlax.not"(%y) : (tensor<0x3xi32>) -> tensor<0x3xi32>
  return %0, %1 : tensor<f32>, tensor<0x3xi32>
}
