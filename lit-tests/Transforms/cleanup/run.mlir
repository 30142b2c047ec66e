// The numbers before and after cleanup are the same (and pinned here).
// RUN: %mlax-run %s --entry main --input '[1.5, -2.0, 0.25]' --input '[3, -7]' | FileCheck %s
// RUN: %mlax-opt --mlax-cleanup %s | %mlax-run --entry main --input '[1.5, -2.0, 0.25]' --input '[3, -7]' | FileCheck %s
// RUN: %mlax-opt --mlax-cleanup %s | FileCheck %s --check-prefix=IR

// IR-LABEL: func.func @main
// IR-NOT:     "mlax.neg"
// IR-COUNT-1: "mlax.exp"
// IR-NOT:     "mlax.exp"

// CHECK:      result[0]: tensor<3xf32> = [4.481689, 0.13533528, 1.2840255]
// CHECK-NEXT: result[1]: tensor<3xf32> = [8.963378, 0.27067056, 2.568051]
// CHECK-NEXT: result[2]: tensor<2xi32> = [13, 11]
// CHECK-EMPTY:
func.func @main(%x: tensor<3xf32>, %i: tensor<2xi32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<2xi32>) {
  %zero = "mlax.constant"() {value = dense<-0.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %one = "mlax.constant"() {value = dense<1.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %n = "mlax.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %nn = "mlax.neg"(%n) : (tensor<3xf32>) -> tensor<3xf32>
  %s = "mlax.add"(%nn, %zero) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %m = "mlax.mul"(%s, %one) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %e1 = "mlax.exp"(%m) : (tensor<3xf32>) -> tensor<3xf32>
  %e2 = "mlax.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %sum = "mlax.add"(%e1, %e2) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %c = "mlax.constant"() {value = dense<[4, 2]> : tensor<2xi32>} : () -> tensor<2xi32>
  %cc = "mlax.mul"(%c, %c) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %r = "mlax.sub"(%cc, %i) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %dead = "mlax.tanh"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %e1, %sum, %r : tensor<3xf32>, tensor<3xf32>, tensor<2xi32>
}
