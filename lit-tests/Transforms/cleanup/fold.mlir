// RUN: %mlax-opt --mlax-cleanup %s | FileCheck %s
// RUN: %mlax-opt --mlax-cleanup='fold-limit=4' %s | FileCheck %s --check-prefix=LIMIT
// RUN: %mlax-opt --mlax-cleanup --mlir-print-debuginfo %s | FileCheck %s --check-prefix=LOC

// Constant folding: an mlax op whose operands are all mlax.constant is evaluated with
// the dialect's NumPy reference rule and replaced by a constant.

// CHECK-LABEL: func.func @test_fold_binary
// CHECK-NEXT:    %[[C:.*]] = "mlax.constant"() {value = dense<[5, 7, 9]> : tensor<3xi32>}
// CHECK-NEXT:    return %[[C]]
func.func @test_fold_binary() -> tensor<3xi32> {
  %a = "mlax.constant"() {value = dense<[1, 2, 3]> : tensor<3xi32>} : () -> tensor<3xi32>
  %b = "mlax.constant"() {value = dense<[4, 5, 6]> : tensor<3xi32>} : () -> tensor<3xi32>
  %0 = "mlax.add"(%a, %b) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// A chain folds front to back; integer negation wraps like XLA's.
// CHECK-LABEL: func.func @test_fold_chain
// CHECK-NEXT:    %[[C:.*]] = "mlax.constant"() {value = dense<[-2147483648, 1]> : tensor<2xi32>}
// CHECK-NEXT:    return %[[C]]
func.func @test_fold_chain() -> tensor<2xi32> {
  %a = "mlax.constant"() {value = dense<[-2147483648, 3]> : tensor<2xi32>} : () -> tensor<2xi32>
  %b = "mlax.constant"() {value = dense<[0, 4]> : tensor<2xi32>} : () -> tensor<2xi32>
  %0 = "mlax.neg"(%a) : (tensor<2xi32>) -> tensor<2xi32>
  %1 = "mlax.add"(%0, %b) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %1 : tensor<2xi32>
}

// convert follows StableHLO: floats truncate toward zero, NaN becomes 0.
// CHECK-LABEL: func.func @test_fold_convert
// CHECK-NEXT:    %[[C:.*]] = "mlax.constant"() {value = dense<[1, -2, 0]> : tensor<3xi32>}
// CHECK-NEXT:    return %[[C]]
func.func @test_fold_convert() -> tensor<3xi32> {
  %a = "mlax.constant"() {value = dense<[1.75, -2.5, 0x7FC00000]> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = "mlax.convert"(%a) {new_dtype = i32} : (tensor<3xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// An all-equal result is stored as a splat, however many elements it has.
// CHECK-LABEL: func.func @test_fold_splat
// CHECK-NEXT:    %[[C:.*]] = "mlax.constant"() {value = dense<3.000000e+00> : tensor<1000xf32>}
// CHECK-NEXT:    return %[[C]]
func.func @test_fold_splat() -> tensor<1000xf32> {
  %a = "mlax.constant"() {value = dense<1.0> : tensor<1000xf32>} : () -> tensor<1000xf32>
  %b = "mlax.constant"() {value = dense<2.0> : tensor<1000xf32>} : () -> tensor<1000xf32>
  %0 = "mlax.add"(%a, %b) : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
  return %0 : tensor<1000xf32>
}

// The folded constant keeps the location of the op it replaces.
// LOC-LABEL: func.func @test_fold_keeps_location
// LOC:         "mlax.constant"() {value = dense<4.000000e+00> : tensor<1xf32>} : () -> tensor<1xf32> loc([[LOC:#loc[0-9]+]])
// LOC:       [[LOC]] = loc("the_mul")
func.func @test_fold_keeps_location() -> tensor<1xf32> {
  %a = "mlax.constant"() {value = dense<2.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %0 = "mlax.mul"(%a, %a) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32> loc("the_mul")
  return %0 : tensor<1xf32>
}

// Not folded: an operand is a function argument, not a constant.
// CHECK-LABEL: func.func @test_no_fold_argument
// CHECK:         "mlax.mul"(%arg0, %{{.*}})
func.func @test_no_fold_argument(%x: tensor<3xf32>) -> tensor<3xf32> {
  %a = "mlax.constant"() {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = "mlax.mul"(%x, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// Not folded: 100000 elements is over the default fold-limit (65536), so the splat is
// not materialised.
// CHECK-LABEL: func.func @test_no_fold_over_limit
// CHECK:         "mlax.exp"
func.func @test_no_fold_over_limit() -> tensor<100000xf32> {
  %a = "mlax.constant"() {value = dense<1.0> : tensor<100000xf32>} : () -> tensor<100000xf32>
  %0 = "mlax.exp"(%a) : (tensor<100000xf32>) -> tensor<100000xf32>
  return %0 : tensor<100000xf32>
}

// With fold-limit=4 an 8-element add stays; the default limit folds it.
// CHECK-LABEL: func.func @test_no_fold_over_option_limit
// CHECK-NOT:     "mlax.add"
// LIMIT-LABEL: func.func @test_no_fold_over_option_limit
// LIMIT:         "mlax.add"
func.func @test_no_fold_over_option_limit() -> tensor<8xi32> {
  %a = "mlax.constant"() {value = dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi32>} : () -> tensor<8xi32>
  %0 = "mlax.add"(%a, %a) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  return %0 : tensor<8xi32>
}
