// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-gpu-pipeline{to=buffers})' %s | FileCheck %s --check-prefix=BUFFERS
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-gpu-pipeline{to=gpu})' %s | FileCheck %s --check-prefix=GPU
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-gpu-pipeline{to=nvvm})' %s | FileCheck %s --check-prefix=NVVM
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-gpu-pipeline)' %s | FileCheck %s --check-prefix=PTX
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-gpu-pipeline{chip=sm_80 features=+ptx70})' %s | FileCheck %s --check-prefix=SM80
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-gpu-pipeline)' %s | %mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=HOST
// RUN: not %mlax-opt --pass-pipeline='builtin.module(mlax-gpu-pipeline{to=asm})' %s 2>&1 | FileCheck %s --check-prefix=BADSTAGE
// RUN: not %mlax-opt --pass-pipeline='builtin.module(mlax-gpu-pipeline{format=cuda})' %s 2>&1 | FileCheck %s --check-prefix=BADFORMAT

// A dense layer (matmul, bias, tanh) and a row max through the stages of the GPU pipeline.

// The CPU pipeline's linalg stage, then buffers: arguments and results are memrefs (results
// out-parameters); the matmul stays a linalg op (no BLAS call).
// BUFFERS-LABEL: func.func @jit.f(%arg0: memref<64x128xf32> {llvm.noalias}, %arg1: memref<128x256xf32> {llvm.noalias}, %arg2: memref<256xf32> {llvm.noalias}, %arg3: memref<64x256xf32> {llvm.noalias}, %arg4: memref<64xf32> {llvm.noalias})
// BUFFERS-NOT:   call @mlax_sgemm
// BUFFERS:       linalg.matmul ins(%arg0, %arg1 : memref<64x128xf32>, memref<128x256xf32>) outs(%arg3 : memref<64x256xf32>)
// BUFFERS:       linalg.generic {{.*}} ins(%arg3, %arg2 : memref<64x256xf32>, memref<256xf32>) outs(%arg3 : memref<64x256xf32>)
// BUFFERS-NOT:   omp.

// gpu: five kernels (the matmul's zero fill, the matmul, bias+tanh fused, the max's fill, the
// max), launched from host code that has no loop left. Threads x walk the contiguous
// dimension (blocks of 32x8 threads; 256 columns / 32 = 8 blocks in x, 64 rows / 8 in y).
// GPU:           module attributes {gpu.container_module}
// GPU-LABEL:     func.func @jit.f(
// GPU-NOT:         scf.parallel
// GPU-NOT:         scf.for
// GPU:             gpu.launch_func @jit.f_kernel::@jit_f_kernel blocks in (%[[C8:.*]], %[[C8]], %{{.*}}) threads in (%[[C32:.*]], %[[C8]], %{{.*}}) args({{.*}}%arg3 : memref<64x256xf32>)
// GPU-NEXT:        gpu.launch_func @jit.f_kernel_0::@jit_f_kernel {{.*}} args({{.*}}%arg0 : memref<64x128xf32>, %arg1 : memref<128x256xf32>, %arg3 : memref<64x256xf32>)
// GPU-NEXT:        gpu.launch_func @jit.f_kernel_1::@jit_f_kernel {{.*}} args({{.*}}%arg3 : memref<64x256xf32>, %arg2 : memref<256xf32>)
// GPU-NEXT:        gpu.launch_func @jit.f_kernel_2::@jit_f_kernel {{.*}} args({{.*}}%arg4 : memref<64xf32>)
// GPU-NEXT:        gpu.launch_func @jit.f_kernel_3::@jit_f_kernel {{.*}} args({{.*}}%arg3 : memref<64x256xf32>, %arg4 : memref<64xf32>)
// GPU-NEXT:        return
// The matmul: one thread per output element, a sequential loop over k.
// GPU:           gpu.module @jit.f_kernel_0
// GPU:             gpu.thread_id x
// GPU:             scf.for %{{.*}} = %c0 to %c128
// GPU:               arith.mulf
// GPU:               arith.addf
// The bias and the tanh in one kernel: one load of each operand, one store.
// GPU:           gpu.module @jit.f_kernel_1
// GPU-COUNT-2:     memref.load
// GPU-NOT:         memref.load
// GPU:             memref.store
// GPU-NOT:         memref.store
// GPU:             gpu.return
// GPU:           gpu.module @jit.f_kernel_3
// GPU:             scf.for %{{.*}} = %c0 to %c256
// GPU:               arith.maximumf

// nvvm: the host calls MLIR's CUDA runtime wrappers with one pointer per buffer; kernels are
// NVVM.
// NVVM:          llvm.func @jit.f(%arg0: !llvm.ptr {llvm.noalias}, %arg1: !llvm.ptr {llvm.noalias}, %arg2: !llvm.ptr {llvm.noalias}, %arg3: !llvm.ptr {llvm.noalias}, %arg4: !llvm.ptr {llvm.noalias})
// NVVM:            llvm.call @mgpuStreamCreate()
// NVVM-COUNT-5:    gpu.launch_func <%{{.*}} : !llvm.ptr>
// NVVM:            llvm.call @mgpuStreamSynchronize
// NVVM:          gpu.module @jit.f_kernel [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// NVVM:            nvvm.read.ptx.sreg.tid.x
// NVVM-NOT:      memref.
// NVVM-NOT:      scf.

// binary: PTX for sm_90 in each gpu.binary, no CUDA installation needed.
// PTX:           gpu.binary @jit.f_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_90{{.*}}.visible .entry jit_f_kernel({{.*}}st.global.b32
// The matmul's kernel reads both operands from global memory in its k loop.
// PTX-NEXT:      gpu.binary @jit.f_kernel_0 {{.*}}.target sm_90{{.*}}$L__BB0_1:{{.*}}ld.global.b32{{.*}}ld.global.b32{{.*}}mul.rn.f32{{.*}}add.rn.f32
// PTX-NEXT:      gpu.binary @jit.f_kernel_1 {{.*}}.target sm_90{{.*}}ld.global
// PTX-NEXT:      gpu.binary @jit.f_kernel_2 {{.*}}.target sm_90
// PTX-NEXT:      gpu.binary @jit.f_kernel_3 {{.*}}.target sm_90{{.*}}ld.global{{.*}}max.NaN.f32
// PTX-NOT:       .extern
// PTX-NOT:       gpu.module
// SM80:          .target sm_80

// The host code as LLVM IR: the kernels' PTX is loaded by a global constructor and launched
// through the runtime wrappers.
// HOST:          @llvm.global_ctors
// HOST:          define void @jit.f(ptr noalias %0, ptr noalias %1, ptr noalias %2, ptr noalias %3, ptr noalias %4)
// HOST:            call void @mgpuLaunchKernel(
// HOST:          call ptr @mgpuModuleLoadJIT(

// BADSTAGE: mlax-gpu-pipeline: option 'to' must be one of linalg, buffers, gpu, nvvm, binary, got 'asm'
// BADFORMAT: mlax-gpu-pipeline: option 'format' must be one of isa, bin, fatbin, llvm, offload, got 'cuda'

func.func @f(%x: tensor<64x128xf32>, %w: tensor<128x256xf32>, %b: tensor<256xf32>) -> (tensor<64x256xf32>, tensor<64xf32>) {
  %0 = "mlax.dot_general"(%x, %w) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<64x128xf32>, tensor<128x256xf32>) -> tensor<64x256xf32>
  %bb = "mlax.broadcast_in_dim"(%b) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 64, 256>} : (tensor<256xf32>) -> tensor<64x256xf32>
  %1 = "mlax.add"(%0, %bb) : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32>
  %2 = "mlax.tanh"(%1) : (tensor<64x256xf32>) -> tensor<64x256xf32>
  %3 = "mlax.reduce_max"(%2) {dimensions = array<i64: 1>} : (tensor<64x256xf32>) -> tensor<64xf32>
  return %2, %3 : tensor<64x256xf32>, tensor<64xf32>
}
