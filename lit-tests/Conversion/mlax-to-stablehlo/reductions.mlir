// RUN: %mlax-opt --allow-unregistered-dialect --mlax-lower-to-stablehlo %s | FileCheck %s

// reduce_*: stablehlo.reduce from the identity with a one-op body; f16/bf16 sums and
// products accumulate in f32 and round once; an empty `dimensions` is the operand.

// CHECK-LABEL: func.func @test_reduce
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf16>, %[[U:.*]]: tensor<2x3xui8>, %[[B:.*]]: tensor<2x3xi1>)
// CHECK:         %[[ZERO:.*]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK:         %[[WIDE:.*]] = "stablehlo.convert"(%[[X]]) : (tensor<2x3xf16>) -> tensor<2x3xf32>
// CHECK:         %[[SUM:.*]] = "stablehlo.reduce"(%[[WIDE]], %[[ZERO]]) ({
// CHECK:           "stablehlo.add"
// CHECK:         }) {dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK:         %[[S16:.*]] = "stablehlo.convert"(%[[SUM]]) : (tensor<3xf32>) -> tensor<3xf16>
// The unsigned minimum starts from all ones, the boolean maximum (an or) from false.
// CHECK:         %[[MAXU:.*]] = "stablehlo.constant"() {value = dense<255> : tensor<ui8>}
// CHECK:         %[[MIN:.*]] = "stablehlo.reduce"(%[[U]], %[[MAXU]]) ({
// CHECK:           "stablehlo.minimum"
// CHECK:         %[[FALSE:.*]] = "stablehlo.constant"() {value = dense<false> : tensor<i1>}
// CHECK:         %[[ANY:.*]] = "stablehlo.reduce"(%[[B]], %[[FALSE]]) ({
// CHECK:           "stablehlo.or"
// CHECK:         }) {dimensions = array<i64: 0, 1>} : (tensor<2x3xi1>, tensor<i1>) -> tensor<i1>
// CHECK:         return %[[S16]], %[[MIN]], %[[ANY]], %[[U]]
func.func @test_reduce(%x: tensor<2x3xf16>, %u: tensor<2x3xui8>, %b: tensor<2x3xi1>) -> (tensor<3xf16>, tensor<2xui8>, tensor<i1>, tensor<2x3xui8>) {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<2x3xf16>) -> tensor<3xf16>
  %1 = "mlax.reduce_min"(%u) {dimensions = array<i64: 1>} : (tensor<2x3xui8>) -> tensor<2xui8>
  %2 = "mlax.reduce_max"(%b) {dimensions = array<i64: 0, 1>} : (tensor<2x3xi1>) -> tensor<i1>
  %3 = "mlax.reduce_and"(%u) {dimensions = array<i64>} : (tensor<2x3xui8>) -> tensor<2x3xui8>
  return %0, %1, %2, %3 : tensor<3xf16>, tensor<2xui8>, tensor<i1>, tensor<2x3xui8>
}

// argmax: a variadic reduce of (value, index) from (-inf, 0), counting in index_dtype as jax
// does when the axis fits in it. The combiner is symmetric: a wins if a > b or a is NaN and b
// is not; a tie (equal, or both NaN) keeps the lower index.
// CHECK-LABEL: func.func @test_argmax
// CHECK:         %[[IOTA:.*]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<2x3xi8>
// CHECK:         %[[NEGINF:.*]] = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK:         %[[Z:.*]] = "stablehlo.constant"() {value = dense<0> : tensor<i8>}
// CHECK:         %[[R:.*]]:2 = "stablehlo.reduce"(%arg0, %[[IOTA]], %[[NEGINF]], %[[Z]]) ({
// CHECK:         ^bb0(%[[A:.*]]: tensor<f32>, %[[I:.*]]: tensor<i8>, %[[B:.*]]: tensor<f32>, %[[J:.*]]: tensor<i8>):
// CHECK-DAG:       %[[GT:.*]] = "stablehlo.compare"(%[[A]], %[[B]]) {{.*}}comparison_direction GT
// CHECK-DAG:       %[[EQ:.*]] = "stablehlo.compare"(%[[A]], %[[B]]) {{.*}}comparison_direction EQ
// CHECK-DAG:       %[[ANAN:.*]] = "stablehlo.compare"(%[[A]], %[[A]]) {{.*}}comparison_direction NE
// CHECK-DAG:       %[[BNAN:.*]] = "stablehlo.compare"(%[[B]], %[[B]]) {{.*}}comparison_direction NE
// CHECK-DAG:       %[[LOWER:.*]] = "stablehlo.compare"(%[[I]], %[[J]]) {compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}
// CHECK:           %[[V:.*]] = "stablehlo.select"(%[[WINS:.*]], %[[A]], %[[B]]) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK:           %[[K:.*]] = "stablehlo.select"(%{{.*}}, %[[I]], %[[J]]) : (tensor<i1>, tensor<i8>, tensor<i8>) -> tensor<i8>
// CHECK:           "stablehlo.return"(%[[V]], %[[K]]) : (tensor<f32>, tensor<i8>) -> ()
// CHECK:         }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> (tensor<2xf32>, tensor<2xi8>)
// CHECK-NOT:     stablehlo.convert
// CHECK:         return %[[R]]#1
func.func @test_argmax(%x: tensor<2x3xf32>) -> tensor<2xi8> {
  %0 = "mlax.argmax"(%x) {axis = 1 : i64, index_dtype = i8} : (tensor<2x3xf32>) -> tensor<2xi8>
  return %0 : tensor<2xi8>
}

// An axis longer than index_dtype counts: in i64, converted last (narrow types wrap).
// CHECK-LABEL: func.func @test_argmin_long_axis
// CHECK:         "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<300xi64>
// CHECK:         %[[R:.*]]:2 = "stablehlo.reduce"
// CHECK:         "stablehlo.convert"(%[[R]]#1) : (tensor<i64>) -> tensor<ui8>
func.func @test_argmin_long_axis(%x: tensor<300xf32>) -> tensor<ui8> {
  %0 = "mlax.argmin"(%x) {axis = 0 : i64, index_dtype = ui8} : (tensor<300xf32>) -> tensor<ui8>
  return %0 : tensor<ui8>
}

// cum*: JAX's reduce_window over the whole axis, padded by n - 1 identities before each
// element (after, for reverse = 1). A float running sum starts from -0.0, IEEE addition's
// identity (a running sum of -0.0 stays -0.0, as the reference's).
// CHECK-LABEL: func.func @test_cumulative
// CHECK:         %[[MZERO:.*]] = "stablehlo.constant"() {value = dense<-0.000000e+00> : tensor<f32>}
// CHECK:         "stablehlo.reduce_window"(%arg0, %[[MZERO]]) ({
// CHECK:           "stablehlo.add"
// CHECK:         }) {base_dilations = array<i64: 1, 1>, padding = dense<{{\[\[}}0, 0], [3, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 4>, window_strides = array<i64: 1, 1>}
// CHECK:         %[[IMAX:.*]] = "stablehlo.constant"() {value = dense<2147483647> : tensor<i32>}
// CHECK:         "stablehlo.reduce_window"(%arg1, %[[IMAX]]) ({
// CHECK:           "stablehlo.minimum"
// CHECK:         }) {{{.*}}padding = dense<{{\[\[}}0, 1], [0, 0]]> : tensor<2x2xi64>, {{.*}}window_dimensions = array<i64: 2, 1>
func.func @test_cumulative(%x: tensor<2x4xf32>, %i: tensor<2x4xi32>) -> (tensor<2x4xf32>, tensor<2x4xi32>) {
  %0 = "mlax.cumsum"(%x) {axis = 1 : i64, reverse = 0 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = "mlax.cummin"(%i) {axis = 0 : i64, reverse = 1 : i64} : (tensor<2x4xi32>) -> tensor<2x4xi32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xi32>
}
