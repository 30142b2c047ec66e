// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-gpu-pipeline{to=gpu})' %s | FileCheck %s
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-gpu-pipeline)' %s | %PYTHON -c "import sys; print(sys.stdin.read().replace(chr(92) + '0A', chr(10)).replace(chr(92) + '09', chr(32)))" | FileCheck %s --check-prefix=PTX

// A column sum through the GPU pipeline: a fill kernel, then one thread per column looping over
// the rows. The kernels' buffer arguments are the entry's, distinct (mlax-gpu-noalias): the
// input is llvm.noalias and llvm.readonly, the output llvm.noalias. In the PTX the
// accumulator stays in a register through the loop (without noalias LLVM stored it back at
// every step, since a load from the input might have read it) and is stored once after it,
// and the input is read through the non-coherent cache (ld.global.nc).
// CHECK-LABEL: func.func @jit.colsum(
// CHECK:         gpu.launch_func @jit.colsum_kernel::@jit_colsum_kernel {{.*}} args(%c32 : index, %arg1 : memref<32xf32>)
// CHECK:         gpu.launch_func @jit.colsum_kernel_0::@jit_colsum_kernel {{.*}} args(%c32 : index, %arg0 : memref<64x32xf32>, %arg1 : memref<32xf32>)
// CHECK:         gpu.func @jit_colsum_kernel(%arg0: index, %arg1: memref<32xf32> {llvm.noalias}) kernel
// CHECK:         gpu.func @jit_colsum_kernel(%arg0: index, %arg1: memref<64x32xf32> {llvm.noalias, llvm.readonly}, %arg2: memref<32xf32> {llvm.noalias}) kernel
// PTX-LABEL:   .visible .entry jit_colsum_kernel(
// PTX:           st.global.v4.b32 [%rd{{[0-9]+}}], {0f00000000, 0f00000000, 0f00000000, 0f00000000};
// PTX-LABEL:   .visible .entry jit_colsum_kernel(
// PTX:           ld.global.b32 %[[ACC:r[0-9]+]], [%[[OUT:rd[0-9]+]]];
// PTX:         $L__BB0_1:
// PTX-NOT:       st.global
// PTX:           ld.global.nc.b32
// PTX-NOT:       st.global
// PTX:           @%p{{[0-9]+}} bra $L__BB0_1;
// PTX-NEXT:      st.global.b32 [%[[OUT]]], %r{{[0-9]+}};
// PTX-NEXT:      ret;
func.func @colsum(%x: tensor<64x32xf32>) -> tensor<32xf32> {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<64x32xf32>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}
