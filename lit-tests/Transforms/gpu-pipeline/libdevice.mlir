// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-gpu-pipeline{to=nvvm})' %s | FileCheck %s --check-prefix=NVVM
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-gpu-pipeline)' %s | FileCheck %s --check-prefix=PTX

// Math functions without a PTX instruction or an mlax polynomial (sin, cos, atan2, pow, f64 cbrt)
// are calls of CUDA's libdevice, linked from the nvidia-cuda-nvcc-cu12 wheel (mlax[gpu]) when the
// kernels are compiled: the PTX holds their code, no unresolved .extern function.
// NVVM:      gpu.module @jit.f_kernel [#nvvm.target<{{.*}}link = ["{{.*}}libdevice.10.bc"]>]
// NVVM-DAG:    llvm.call @__nv_sinf
// NVVM-DAG:    llvm.call @__nv_cosf
// NVVM-DAG:    llvm.call @__nv_atan2f
// NVVM-DAG:    llvm.call @__nv_powf
// NVVM-DAG:    llvm.call @__nv_cbrt(
// PTX:       gpu.binary @jit.f_kernel
// PTX-NOT:   .extern
// PTX-NOT:   __nv_
// PTX:       .visible .entry jit_f_kernel
func.func @f(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %z: tensor<4x8xf64>) -> (tensor<4x8xf32>, tensor<4x8xf64>)
    attributes {mlax.public} {
  %0 = "mlax.sin"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "mlax.cos"(%y) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "mlax.atan2"(%0, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "mlax.pow"(%2, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = "mlax.cbrt"(%z) : (tensor<4x8xf64>) -> tensor<4x8xf64>
  return %3, %4 : tensor<4x8xf32>, tensor<4x8xf64>
}
