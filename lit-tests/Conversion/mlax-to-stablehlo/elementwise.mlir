// RUN: %mlax-opt --allow-unregistered-dialect --mlax-lower-to-stablehlo %s | FileCheck %s

// Elementwise and comparison ops: most are one StableHLO op under StableHLO's name; erf,
// erfc, erf_inv and nextafter are the chlo ops JAX emits (XLA expands them); exp2 and
// logistic are JAX's compositions, each step in the operand type.

// CHECK-LABEL: func.func @test_renamed
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<2x3xf32>)
// CHECK:         %[[N:.*]] = "stablehlo.negate"(%[[X]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[E:.*]] = "stablehlo.exponential_minus_one"(%[[N]])
// CHECK:         %[[L:.*]] = "stablehlo.log_plus_one"(%[[E]])
// CHECK:         %[[S:.*]] = "stablehlo.subtract"(%[[L]], %[[Y]])
// CHECK:         %[[R:.*]] = "stablehlo.remainder"(%[[S]], %[[Y]])
// CHECK:         return %[[R]]
func.func @test_renamed(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "mlax.neg"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "mlax.expm1"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "mlax.log1p"(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = "mlax.sub"(%2, %y) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = "mlax.rem"(%3, %y) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %4 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @test_chlo
// CHECK:         %[[A:.*]] = "chlo.erf"(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         %[[B:.*]] = "chlo.erfc"(%[[A]])
// CHECK:         %[[C:.*]] = "chlo.erf_inv"(%[[B]])
// CHECK:         "chlo.next_after"(%[[C]], %{{.*}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
func.func @test_chlo(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "mlax.erf"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "mlax.erfc"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "mlax.erf_inv"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "mlax.nextafter"(%2, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}

// round's rounding_method picks the StableHLO op.
// CHECK-LABEL: func.func @test_round
// CHECK:         "stablehlo.round_nearest_afz"
// CHECK:         "stablehlo.round_nearest_even"
func.func @test_round(%x: tensor<4xbf16>) -> (tensor<4xbf16>, tensor<4xbf16>) {
  %0 = "mlax.round"(%x) {rounding_method = "away_from_zero"} : (tensor<4xbf16>) -> tensor<4xbf16>
  %1 = "mlax.round"(%x) {rounding_method = "to_nearest_even"} : (tensor<4xbf16>) -> tensor<4xbf16>
  return %0, %1 : tensor<4xbf16>, tensor<4xbf16>
}

// exp2 is exp(ln2 * x) and logistic 1 / (1 + exp(-x)), in f16 throughout.
// CHECK-LABEL: func.func @test_exp2_logistic
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf16>)
// CHECK:         %[[LN2_SCALAR:.*]] = "stablehlo.constant"() {value = dense<6.933590e-01> : tensor<f16>}
// CHECK-NEXT:    %[[LN2:.*]] = "stablehlo.broadcast_in_dim"(%[[LN2_SCALAR]]) {broadcast_dimensions = array<i64>} : (tensor<f16>) -> tensor<4xf16>
// CHECK:         %[[P:.*]] = "stablehlo.multiply"(%[[LN2]], %[[X]]) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
// CHECK:         "stablehlo.exponential"(%[[P]])
// CHECK:         %[[ONE_SCALAR:.*]] = "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<f16>}
// CHECK-NEXT:    %[[ONE:.*]] = "stablehlo.broadcast_in_dim"(%[[ONE_SCALAR]]) {broadcast_dimensions = array<i64>} : (tensor<f16>) -> tensor<4xf16>
// CHECK:         %[[N:.*]] = "stablehlo.negate"(%[[X]])
// CHECK:         %[[E:.*]] = "stablehlo.exponential"(%[[N]])
// CHECK:         %[[D:.*]] = "stablehlo.add"(%[[ONE]], %[[E]])
// CHECK:         "stablehlo.divide"(%[[ONE]], %[[D]])
func.func @test_exp2_logistic(%x: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf16>) {
  %0 = "mlax.exp2"(%x) : (tensor<4xf16>) -> tensor<4xf16>
  %1 = "mlax.logistic"(%x) : (tensor<4xf16>) -> tensor<4xf16>
  return %0, %1 : tensor<4xf16>, tensor<4xf16>
}

// Booleans: add and max are or, mul and min are and. StableHLO's sign has no unsigned form.
// CHECK-LABEL: func.func @test_bool_and_unsigned
// CHECK:         "stablehlo.or"(%{{.*}}, %{{.*}}) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
// CHECK:         "stablehlo.and"(%{{.*}}, %{{.*}}) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
// CHECK:         %[[Z_SCALAR:.*]] = "stablehlo.constant"() {value = dense<0> : tensor<ui8>}
// CHECK-NEXT:    %[[Z:.*]] = "stablehlo.broadcast_in_dim"(%[[Z_SCALAR]]) {broadcast_dimensions = array<i64>} : (tensor<ui8>) -> tensor<3xui8>
// CHECK:         %[[EQ:.*]] = "stablehlo.compare"(%{{.*}}, %[[Z]]) {compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}
// CHECK:         "stablehlo.select"(%[[EQ]], %{{.*}}, %{{.*}}) : (tensor<3xi1>, tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
func.func @test_bool_and_unsigned(%b: tensor<3xi1>, %u: tensor<3xui8>) -> (tensor<3xi1>, tensor<3xi1>, tensor<3xui8>) {
  %0 = "mlax.add"(%b, %b) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %1 = "mlax.min"(%b, %b) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %2 = "mlax.sign"(%u) : (tensor<3xui8>) -> tensor<3xui8>
  return %0, %1, %2 : tensor<3xi1>, tensor<3xi1>, tensor<3xui8>
}

// Float pow is stablehlo.power. Integer pow is square-and-multiply over every bit of the
// exponent (XLA's integer power reads only 6 of them): for i8, negative exponents are set to
// 0, then 7 bits (7 products into the result, 6 squarings), then the results of negative
// exponents (1, +-1 or 0) are chosen.
// CHECK-LABEL: func.func @test_pow
// CHECK:          "stablehlo.power"(%{{.*}}, %{{.*}}) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NOT:      "stablehlo.power"
// CHECK:          "stablehlo.select"
// CHECK-COUNT-13: "stablehlo.multiply"(%{{.*}}, %{{.*}}) : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
// CHECK-NOT:      "stablehlo.multiply"
// CHECK:          return
func.func @test_pow(%x: tensor<2xf32>, %i: tensor<2xi8>) -> (tensor<2xf32>, tensor<2xi8>) {
  %0 = "mlax.pow"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "mlax.pow"(%i, %i) : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
  return %0, %1 : tensor<2xf32>, tensor<2xi8>
}

// compare carries JAX's comparison type: FLOAT, SIGNED, UNSIGNED (unsigned and i1).
// CHECK-LABEL: func.func @test_compare
// CHECK:         {compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>} : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xi1>
// CHECK:         {compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
// CHECK:         {compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xi1>
// CHECK:         {compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
func.func @test_compare(%f: tensor<3xbf16>, %i: tensor<3xi64>, %u: tensor<3xui32>, %b: tensor<3xi1>) -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  %0 = "mlax.compare"(%f, %f) {comparison_direction = "NE"} : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xi1>
  %1 = "mlax.compare"(%i, %i) {comparison_direction = "GE"} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  %2 = "mlax.compare"(%u, %u) {comparison_direction = "LT"} : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xi1>
  %3 = "mlax.compare"(%b, %b) {comparison_direction = "GT"} : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return %0, %1, %2, %3 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
}

// A rank-0 predicate and rank-0 bounds stay rank 0, as StableHLO allows.
// CHECK-LABEL: func.func @test_select_clamp
// CHECK-SAME:    (%[[P:.*]]: tensor<i1>, %[[LO:.*]]: tensor<f32>, %[[X:.*]]: tensor<2x3xf32>, %[[HI:.*]]: tensor<f32>)
// CHECK:         %[[S:.*]] = "stablehlo.select"(%[[P]], %[[X]], %[[X]]) : (tensor<i1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:         "stablehlo.clamp"(%[[LO]], %[[S]], %[[HI]]) : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
func.func @test_select_clamp(%p: tensor<i1>, %lo: tensor<f32>, %x: tensor<2x3xf32>, %hi: tensor<f32>) -> tensor<2x3xf32> {
  %0 = "mlax.select"(%p, %x, %x) : (tensor<i1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "mlax.clamp"(%lo, %0, %hi) : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
