// RUN: %mlax-run %s --entry test_mean_of_offset_values --backend cpu | FileCheck %s
// RUN: %mlax-run %s --entry test_mean_of_offset_values --backend interpreter | FileCheck %s
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-cpu-pipeline{to=linalg})' %s | FileCheck %s --check-prefix=IR

// 2^24 f32 values 10000 + (i mod 4 - 1.5) / 2: every four sum to 40000, so the mean is 10000,
// the column sums of the 4096 x 4096 view are 4096 * (10000 + (j mod 4 - 1.5) / 2), and the
// last running sum is 1.6777216e11. One accumulator adding all 2^24 values gave a mean of
// about 9987 (each addend rounds to the spacing of a total near 1e11); the sums now run in
// blocks (of 512 contiguous values, of 32 rows) and cumsum in blocks of 256.
// CHECK: result[0]: tensor<f32> = 10000.0
// CHECK-NEXT: result[1]: tensor<4xf32> = [4.095693e+07, 4.0958976e+07, 4.0961024e+07, 4.096307e+07]
// CHECK-NEXT: result[2]: tensor<f32> = 1.6777216e+11
// IR-LABEL: func.func @test_mean_of_offset_values
// IR: tensor.expand_shape {{.*}} into tensor<32768x512xf32>
// IR: tensor.expand_shape {{.*}} into tensor<128x32x4096xf32>
func.func @test_mean_of_offset_values() -> (tensor<f32>, tensor<4xf32>, tensor<f32>) {
  %i = "mlax.iota"() {dimension = 0 : i64, dtype = i32, shape = array<i64: 16777216>} : () -> tensor<16777216xi32>
  %four = "mlax.constant"() {value = dense<3> : tensor<16777216xi32>} : () -> tensor<16777216xi32>
  %r = "mlax.and"(%i, %four) : (tensor<16777216xi32>, tensor<16777216xi32>) -> tensor<16777216xi32>
  %rf = "mlax.convert"(%r) {new_dtype = f32} : (tensor<16777216xi32>) -> tensor<16777216xf32>
  %c = "mlax.constant"() {value = dense<1.500000e+00> : tensor<16777216xf32>} : () -> tensor<16777216xf32>
  %d = "mlax.sub"(%rf, %c) : (tensor<16777216xf32>, tensor<16777216xf32>) -> tensor<16777216xf32>
  %h = "mlax.constant"() {value = dense<5.000000e-01> : tensor<16777216xf32>} : () -> tensor<16777216xf32>
  %e = "mlax.mul"(%d, %h) : (tensor<16777216xf32>, tensor<16777216xf32>) -> tensor<16777216xf32>
  %o = "mlax.constant"() {value = dense<1.000000e+04> : tensor<16777216xf32>} : () -> tensor<16777216xf32>
  %x = "mlax.add"(%o, %e) : (tensor<16777216xf32>, tensor<16777216xf32>) -> tensor<16777216xf32>
  %sum = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<16777216xf32>) -> tensor<f32>
  %n = "mlax.constant"() {value = dense<0x4B800000> : tensor<f32>} : () -> tensor<f32>
  %mean = "mlax.div"(%sum, %n) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %grid = "mlax.reshape"(%x) {shape = array<i64: 4096, 4096>} : (tensor<16777216xf32>) -> tensor<4096x4096xf32>
  %cols = "mlax.reduce_sum"(%grid) {dimensions = array<i64: 0>} : (tensor<4096x4096xf32>) -> tensor<4096xf32>
  %first = "mlax.slice"(%cols) {limit_indices = array<i64: 4>, start_indices = array<i64: 0>, strides = array<i64: 1>} : (tensor<4096xf32>) -> tensor<4xf32>
  %run = "mlax.cumsum"(%x) {axis = 0 : i64, reverse = 0 : i64} : (tensor<16777216xf32>) -> tensor<16777216xf32>
  %lastv = "mlax.slice"(%run) {limit_indices = array<i64: 16777216>, start_indices = array<i64: 16777215>, strides = array<i64: 1>} : (tensor<16777216xf32>) -> tensor<1xf32>
  %last = "mlax.reshape"(%lastv) {shape = array<i64>} : (tensor<1xf32>) -> tensor<f32>
  return %mean, %first, %last : tensor<f32>, tensor<4xf32>, tensor<f32>
}
