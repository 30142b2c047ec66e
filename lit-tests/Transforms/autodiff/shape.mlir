// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s

// Shape ops transpose to their adjoints in reverse order: pad -> a pad with negative padding
// (cropping), slice -> a pad with zeros back to the operand's shape, transpose -> the
// inverse permutation.
// CHECK-LABEL: func.func private @f_vjp(%arg0: tensor<2x3xf32>, %arg1: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<2x3xf32>)
// CHECK:         %[[Y:.*]] = "mlax.pad"
// CHECK:         %[[CROP:.*]] = "mlax.pad"(%arg1, %{{.*}}) {{{.*}}edge_padding_low = array<i64: -1, 0>{{.*}}} : (tensor<3x2xf32>, tensor<f32>) -> tensor<2x2xf32>
// CHECK:         %[[BACK:.*]] = "mlax.pad"(%{{.*}}, %{{.*}}) {{{.*}}edge_padding_low = array<i64: 1, 0>{{.*}}} : (tensor<2x2xf32>, tensor<f32>) -> tensor<3x2xf32>
// CHECK:         %[[G:.*]] = "mlax.transpose"(%[[BACK]]) {permutation = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
// CHECK:         return %[[Y]], %[[G]]
func.func @f(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "mlax.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "mlax.slice"(%0) {start_indices = array<i64: 1, 0>, limit_indices = array<i64: 3, 2>, strides = array<i64: 1, 1>} : (tensor<3x2xf32>) -> tensor<2x2xf32>
  %z = "mlax.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %2 = "mlax.pad"(%1, %z) {edge_padding_low = array<i64: 1, 0>, edge_padding_high = array<i64: 0, 0>, interior_padding = array<i64: 0, 0>} : (tensor<2x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  return %2 : tensor<3x2xf32>
}
func.func private @f_vjp(tensor<2x3xf32>, tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<2x3xf32>) attributes {mlax.vjp = {callee = @f, argnums = array<i64: 0>}}
