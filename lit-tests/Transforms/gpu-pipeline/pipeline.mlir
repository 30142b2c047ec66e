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

// gpu: three kernels (the matmul, its zero fill folded in; bias+tanh fused; the row max, its
// fill folded in), launched from host code that has no loop left.
// GPU:           module attributes {gpu.container_module}
// GPU-LABEL:     func.func @jit.f(
// GPU-NOT:         scf.parallel
// GPU-NOT:         scf.for
// GPU:             gpu.launch_func @jit.f_kernel::@jit_f_kernel blocks in (%c4, %c1, %c1) threads in (%c128, %c1, %c1) args(%arg0 : memref<64x128xf32>, %arg1 : memref<128x256xf32>, %arg3 : memref<64x256xf32>)
// GPU-NEXT:        gpu.launch_func @jit.f_kernel_0::@jit_f_kernel {{.*}} args({{.*}}%arg3 : memref<64x256xf32>, %arg2 : memref<256xf32>)
// GPU-NEXT:        gpu.launch_func @jit.f_kernel_1::@jit_f_kernel {{.*}} args({{.*}}%arg3 : memref<64x256xf32>, %arg4 : memref<64xf32>)
// GPU-NEXT:        return
// The matmul (mlax-gpu-matmul): 64x64 output tiles, A and B tiles staged in shared memory,
// TF32 tensor cores, a k loop carrying the accumulators.
// GPU:           gpu.module @jit.f_kernel
// GPU:             workgroup(
// GPU:             scf.for %{{.*}} = %c0 to %c128 step %c32
// GPU:               gpu.barrier
// GPU:               nvvm.mma.sync
// The bias and the tanh in one kernel: one load of each operand, one store, 4 floats at a
// time (mlax-gpu-vectorize).
// GPU:           gpu.module @jit.f_kernel_{{[0-9]+}}
// GPU-COUNT-2:     vector.load
// GPU-NOT:         memref.load
// GPU:             vector.store
// GPU-NOT:         memref.store
// GPU:             gpu.return
// The row max, its fill folded in: a block of 256 threads per row, a block reduction
// (mlax-gpu-row-kernels).
// GPU:           gpu.module @jit.f_kernel_{{[0-9]+}}
// GPU:             scf.for %{{.*}} = %{{.*}} to %c256 step %c256
// GPU:               arith.maximumf
// GPU:             gpu.all_reduce maximumf

// nvvm: the host calls MLIR's CUDA runtime wrappers with one pointer per buffer; kernels are
// NVVM.
// NVVM:          llvm.func @jit.f(%arg0: !llvm.ptr {llvm.noalias}, %arg1: !llvm.ptr {llvm.noalias}, %arg2: !llvm.ptr {llvm.noalias}, %arg3: !llvm.ptr {llvm.noalias}, %arg4: !llvm.ptr {llvm.noalias})
// NVVM:            llvm.call @mgpuStreamCreate()
// NVVM-COUNT-3:    gpu.launch_func <%{{.*}} : !llvm.ptr>
// NVVM:            llvm.call @mgpuStreamSynchronize
// NVVM:          gpu.module @jit.f_kernel [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80", link = ["{{.*}}/libdevice.10.bc"]>]
// NVVM:            nvvm.read.ptx.sreg.tid.x
// NVVM-NOT:      memref.
// NVVM-NOT:      scf.

// binary: PTX for sm_90 in each gpu.binary, no CUDA installation needed.
// The matmul's kernel: shared memory, barriers, tensor cores.
// PTX:           gpu.binary @jit.f_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80"{{.*}}>, {{.*}}assembly = "{{.*}}.target sm_90{{.*}}.visible .entry jit_f_kernel({{.*}}st.shared.b32{{.*}}bar.sync{{.*}}ld.shared.b32{{.*}}mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// PTX-NEXT:      gpu.binary @jit.f_kernel_0 {{.*}}.target sm_90{{.*}}ld.global
// PTX-NEXT:      gpu.binary @jit.f_kernel_1 {{.*}}.target sm_90{{.*}}ld.global{{.*}}max.NaN.f32
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
