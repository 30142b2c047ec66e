// RUN: %mlax-opt --split-input-file --pass-pipeline='builtin.module(mlax-gpu-pipeline{to=gpu})' %s | FileCheck %s
// RUN: %mlax-opt --split-input-file --pass-pipeline='builtin.module(mlax-gpu-pipeline)' %s | FileCheck %s --check-prefix=PTX

// Matmuls through the GPU pipeline (mlax-gpu-matmul): one tiled kernel per dot_general, no
// fill kernel. A block of 128 threads (4 warps of 32x32) computes a 64x64 tile of the result,
// staging 64x32 tiles of A and B in shared memory (workgroup attributions, 64x36 words: rows
// padded against bank conflicts); f32 operands are rounded to TF32 once when staged; each warp
// runs 2x4 m16n8 mma.sync per k step, the 32 accumulators carried by the scf.for over K.

// 96x80 @ 80x72: no size is a multiple of its tile. Loads clamp their index into the operand
// and select zero outside it (arith.minui, arith.select: no branch, no stray read); stores
// outside the result are skipped (scf.if).
// CHECK-LABEL: func.func @jit.f32_edges(
// CHECK:         gpu.launch_func @jit.f32_edges_kernel::@jit_f32_edges_kernel blocks in (%c2, %c2, %c1) threads in (%c128, %c1, %c1) args(%arg0 : memref<96x80xf32>, %arg1 : memref<80x72xf32>, %arg2 : memref<96x72xf32>)
// CHECK-NEXT:    return
// CHECK:         gpu.func @jit_f32_edges_kernel({{.*}}) workgroup(%[[AS:.*]] : memref<64x36xi32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<64x36xi32, #gpu.address_space<workgroup>>) kernel
// CHECK:           scf.for %{{.*}} = %c0 to %c96 step %c32 iter_args({{.*}}) -> (f32, f32,
// CHECK:             arith.minui
// CHECK:             %[[A:.*]] = memref.load %arg0
// CHECK:             arith.select %{{.*}}, %[[A]], %cst : f32
// CHECK:             %[[T:.*]] = llvm.call_intrinsic "llvm.nvvm.f2tf32.rna"
// CHECK:             memref.store %[[T]], %[[AS]]
// CHECK:             gpu.barrier
// CHECK-COUNT-32:    nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 8>
// CHECK:             gpu.barrier
// CHECK:             scf.yield
// CHECK-COUNT-32:  scf.if
// CHECK:           gpu.return
// PTX-LABEL:     gpu.binary @jit.f32_edges_kernel
// PTX-SAME:        .shared .align 4 .b8 __wg_jit_f32_edges_kernel_0[9216]
// PTX-SAME:        cvt.rna.tf32.f32{{.*}}st.shared.b32{{.*}}bar.sync{{.*}}ld.shared.b32{{.*}}mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32{{.*}}bar.sync
// PTX-NOT:       gpu.binary
func.func @f32_edges(%a: tensor<96x80xf32>, %b: tensor<80x72xf32>) -> tensor<96x72xf32> {
  %0 = "mlax.dot_general"(%a, %b) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<96x80xf32>, tensor<80x72xf32>) -> tensor<96x72xf32>
  return %0 : tensor<96x72xf32>
}

// -----

// 4096x4096 @ 4096x4096: 64x64 blocks, no guard anywhere.
// CHECK-LABEL: func.func @jit.f32_4096(
// CHECK:         gpu.launch_func @jit.f32_4096_kernel::@jit_f32_4096_kernel blocks in (%c64, %c64, %c1) threads in (%c128, %c1, %c1)
// CHECK-NEXT:    return
// CHECK:         gpu.func @jit_f32_4096_kernel(
// CHECK-NOT:       arith.minui
// CHECK-NOT:       arith.select
// CHECK-NOT:       scf.if
// CHECK:           scf.for %{{.*}} = %c0 to %c4096 step %c32
// CHECK-NOT:       scf.if
// CHECK:           gpu.return
// PTX-LABEL:     gpu.binary @jit.f32_4096_kernel
// PTX-SAME:        mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
func.func @f32_4096(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %0 = "mlax.dot_general"(%a, %b) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4096x4096xf32>, tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}

// -----

// A batch of 6: the grid's z; each operand indexed by blockIdx.z.
// CHECK-LABEL: func.func @jit.batched(
// CHECK:         gpu.launch_func @jit.batched_kernel::@jit_batched_kernel blocks in (%c5, %c2, %c6) threads in (%c128, %c1, %c1)
// CHECK-NEXT:    return
// CHECK:         %[[Z:.*]] = gpu.block_id z
// CHECK:           memref.load %arg0[%[[Z]], %{{.*}}, %{{.*}}] : memref<6x100x200xf32>
// CHECK:           nvvm.mma.sync
// CHECK:           memref.store %{{.*}}, %arg2[%[[Z]], %{{.*}}, %{{.*}}] : memref<6x100x300xf32>
// PTX-LABEL:     gpu.binary @jit.batched_kernel
// PTX-SAME:        mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
func.func @batched(%a: tensor<6x100x200xf32>, %b: tensor<6x200x300xf32>) -> tensor<6x100x300xf32> {
  %0 = "mlax.dot_general"(%a, %b) {lhs_batch_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, result_dtype = f32, rhs_batch_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<6x100x200xf32>, tensor<6x200x300xf32>) -> tensor<6x100x300xf32>
  return %0 : tensor<6x100x300xf32>
}

// -----

// x @ w.T reads w (72x80) as it is stored, through the product's indexing map: no transpose
// kernel; its tile is staged along its contiguous dimension (k).
// CHECK-LABEL: func.func @jit.x_wT(
// CHECK:         gpu.launch_func @jit.x_wT_kernel::@jit_x_wT_kernel {{.*}} args(%arg0 : memref<96x80xf32>, %arg1 : memref<72x80xf32>, %arg2 : memref<96x72xf32>)
// CHECK-NEXT:    return
// CHECK:           nvvm.mma.sync
// PTX-LABEL:     gpu.binary @jit.x_wT_kernel
// PTX-SAME:        mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
func.func @x_wT(%x: tensor<96x80xf32>, %w: tensor<72x80xf32>) -> tensor<96x72xf32> {
  %0 = "mlax.dot_general"(%x, %w) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<96x80xf32>, tensor<72x80xf32>) -> tensor<96x72xf32>
  return %0 : tensor<96x72xf32>
}

// -----

// f16 (a.T @ b.T, both read as stored): the linalg stage widens the operands to f32 and rounds
// the f32 product back; the pass reads the f16 buffers themselves, packs two halves per register,
// runs m16n8k16 with f32 accumulation and rounds as it stores: one kernel, no f32 buffer.
// CHECK-LABEL: func.func @jit.f16_both_transposed(
// CHECK-NOT:     gpu.alloc
// CHECK:         gpu.launch_func @jit.f16_both_transposed_kernel::@jit_f16_both_transposed_kernel {{.*}} args(%arg0 : memref<80x96xf16>, %arg1 : memref<72x80xf16>, %arg2 : memref<96x72xf16>)
// CHECK-NEXT:    return
// CHECK:         gpu.func @jit_f16_both_transposed_kernel({{.*}}) workgroup({{.*}} : memref<64x40xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<64x40xf16, #gpu.address_space<workgroup>>)
// CHECK:           arith.bitcast %{{.*}} : f16 to i16
// CHECK:           llvm.bitcast %{{.*}} : i32 to vector<2xf16>
// CHECK:           nvvm.mma.sync {{.*}}k = 16>} : (vector<2xf16>, vector<2xf16>, f32)
// CHECK:           %[[H:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK-NEXT:      memref.store %[[H]], %arg2
// PTX-LABEL:     gpu.binary @jit.f16_both_transposed_kernel
// PTX-SAME:        st.shared.b16{{.*}}bar.sync{{.*}}ld.shared{{.*}}mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32{{.*}}cvt.rn.f16.f32{{.*}}st.global.b16
// PTX-NOT:       gpu.binary @jit.f16_both_transposed_kernel_0
func.func @f16_both_transposed(%a: tensor<80x96xf16>, %b: tensor<72x80xf16>) -> tensor<96x72xf16> {
  %0 = "mlax.dot_general"(%a, %b) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, result_dtype = f16, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<80x96xf16>, tensor<72x80xf16>) -> tensor<96x72xf16>
  return %0 : tensor<96x72xf16>
}

// -----

// bf16: as f16, with nvvm's bf16 mma (nvgpu.mma_sync has no bf16).
// CHECK-LABEL: func.func @jit.bf16(
// CHECK:         gpu.launch_func @jit.bf16_kernel::@jit_bf16_kernel {{.*}} args(%arg0 : memref<96x80xbf16>, %arg1 : memref<80x72xbf16>, %arg2 : memref<96x72xbf16>)
// CHECK-NEXT:    return
// CHECK:         gpu.func @jit_bf16_kernel(
// CHECK:           arith.bitcast %{{.*}} : bf16 to i16
// CHECK:           nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}}k = 16
// PTX-LABEL:     gpu.binary @jit.bf16_kernel
// PTX-SAME:        mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32{{.*}}cvt.rn.bf16.f32
func.func @bf16(%a: tensor<96x80xbf16>, %b: tensor<80x72xbf16>) -> tensor<96x72xbf16> {
  %0 = "mlax.dot_general"(%a, %b) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = bf16, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<96x80xbf16>, tensor<80x72xbf16>) -> tensor<96x72xbf16>
  return %0 : tensor<96x72xbf16>
}

// -----

// f64: no tensor cores; the SIMT kernel: 256 threads, 64x16 and 16x64 tiles in shared memory
// (rows padded by one element), a 4x4 register tile per thread, fused multiply-adds.
// CHECK-LABEL: func.func @jit.f64(
// CHECK:         gpu.launch_func @jit.f64_kernel::@jit_f64_kernel blocks in (%c2, %c2, %c1) threads in (%c256, %c1, %c1)
// CHECK:         gpu.func @jit_f64_kernel({{.*}}) workgroup({{.*}} : memref<16x65xf64, #gpu.address_space<workgroup>>, {{.*}} : memref<16x65xf64, #gpu.address_space<workgroup>>)
// CHECK-NOT:       nvvm.mma.sync
// CHECK:           scf.for %{{.*}} = %c0 to %c80 step %c16 iter_args({{.*}}) -> (f64,
// CHECK:             gpu.barrier
// CHECK-COUNT-256:   math.fma {{.*}} : f64
// CHECK:             gpu.barrier
// PTX-LABEL:     gpu.binary @jit.f64_kernel
// PTX-SAME:        st.shared.b64{{.*}}bar.sync{{.*}}ld.shared.b64{{.*}}fma.rn.f64
// PTX-NOT:         mma.sync
func.func @f64(%a: tensor<96x80xf64>, %b: tensor<80x72xf64>) -> tensor<96x72xf64> {
  %0 = "mlax.dot_general"(%a, %b) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f64, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<96x80xf64>, tensor<80x72xf64>) -> tensor<96x72xf64>
  return %0 : tensor<96x72xf64>
}

// -----

// int32: the SIMT kernel with integer multiply-adds (wrapping, as XLA's).
// CHECK-LABEL: func.func @jit.i32(
// CHECK:         gpu.launch_func @jit.i32_kernel::@jit_i32_kernel blocks in (%c2, %c2, %c1) threads in (%c256, %c1, %c1)
// CHECK:         gpu.func @jit_i32_kernel({{.*}}) workgroup({{.*}} : memref<16x65xi32, #gpu.address_space<workgroup>>
// CHECK:           %[[P:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:      arith.addi %[[P]], %{{.*}} : i32
// PTX-LABEL:     gpu.binary @jit.i32_kernel
// PTX-SAME:        bar.sync{{.*}}ld.shared.b32{{.*}}mad.lo.s32
// PTX-NOT:         mma.sync
func.func @i32(%a: tensor<96x80xi32>, %b: tensor<80x72xi32>) -> tensor<96x72xi32> {
  %0 = "mlax.dot_general"(%a, %b) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = i32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<96x80xi32>, tensor<80x72xi32>) -> tensor<96x72xi32>
  return %0 : tensor<96x72xi32>
}

// -----

// x @ w with x of rank 3 (4x24x40, bf16): the linalg stage folds the reshape into the product,
// a linalg.generic over (b, m, n, k) that widens its inputs itself and writes an f32 view of a
// 96x72 temporary, rounded to bf16 by another kernel. The pass reads the generic as a 96x40 by
// 40x72 product (rows m of x at [m / 24, m % 24]) and stores the rounded sums itself: one kernel,
// no temporary.
// CHECK-LABEL: func.func @jit.x3d_bf16(
// CHECK-NOT:     gpu.alloc
// CHECK:         gpu.launch_func @jit.x3d_bf16_kernel::@jit_x3d_bf16_kernel blocks in (%c2, %c2, %c1) threads in (%c128, %c1, %c1) args(%arg0 : memref<4x24x40xbf16>, %arg1 : memref<40x72xbf16>, %arg2 : memref<4x24x72xbf16>)
// CHECK-NEXT:    return
// CHECK:         gpu.func @jit_x3d_bf16_kernel(
// CHECK:           %[[K:.*]] = arith.minui %{{.*}}, %c39 : index
// CHECK-NEXT:      %[[B:.*]] = arith.divui %[[M:.*]], %c24 : index
// CHECK-NEXT:      %[[I:.*]] = arith.remui %[[M]], %c24 : index
// CHECK-NEXT:      memref.load %arg0[%[[B]], %[[I]], %[[K]]] : memref<4x24x40xbf16>
// CHECK:           nvvm.mma.sync {{.*}}#nvvm.mma_type<bf16>
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
// PTX-LABEL:     gpu.binary @jit.x3d_bf16_kernel
// PTX-SAME:        mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-NOT:       gpu.binary
func.func @x3d_bf16(%x: tensor<4x24x40xbf16>, %w: tensor<40x72xbf16>) -> tensor<4x24x72xbf16> {
  %0 = "mlax.dot_general"(%x, %w) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 2>, result_dtype = bf16, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x24x40xbf16>, tensor<40x72xbf16>) -> tensor<4x24x72xbf16>
  return %0 : tensor<4x24x72xbf16>
}
