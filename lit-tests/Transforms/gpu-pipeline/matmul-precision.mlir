// RUN: %mlax-opt --split-input-file --pass-pipeline='builtin.module(mlax-gpu-pipeline{to=buffers})' %s | FileCheck %s --check-prefix=BUF
// RUN: %mlax-opt --split-input-file --pass-pipeline='builtin.module(mlax-gpu-pipeline{to=gpu})' %s | FileCheck %s

// A dot_general's precision reaches mlax-gpu-matmul as the product's `mlax.precision`: HIGHEST
// on either operand runs the SIMT kernel (true f32 FMAs, jax's HIGHEST on a GPU); DEFAULT and
// HIGH use TF32 tensor cores, as jax's.
// BUF-LABEL: func.func @jit.highest
// BUF:         linalg.matmul {mlax.precision = ["DEFAULT", "HIGHEST"]}
// CHECK-LABEL: gpu.func @{{.*}}highest
// CHECK-NOT:     nvvm.mma.sync
// CHECK:         math.fma {{.*}} : f32
// CHECK-NOT:     nvvm.mma.sync
// CHECK:         gpu.return
func.func @highest(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
  %0 = "mlax.dot_general"(%a, %b) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = f32, precision = ["DEFAULT", "HIGHEST"]} : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32>
  return %0 : tensor<64x48xf32>
}

// -----

// BUF-LABEL: func.func @jit.high
// BUF:         linalg.matmul {mlax.precision = ["HIGH", "HIGH"]}
// CHECK-LABEL: gpu.func @{{.*}}high
// CHECK:         nvvm.mma.sync
// CHECK:         gpu.return
func.func @high(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
  %0 = "mlax.dot_general"(%a, %b) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>, lhs_batch_dimensions = array<i64>, rhs_batch_dimensions = array<i64>, result_dtype = f32, precision = ["HIGH", "HIGH"]} : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32>
  return %0 : tensor<64x48xf32>
}
