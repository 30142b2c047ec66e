// RUN: %mlax-opt --split-input-file --pass-pipeline='builtin.module(mlax-gpu-pipeline{to=gpu})' %s | FileCheck %s
// RUN: %mlax-opt --split-input-file --pass-pipeline='builtin.module(mlax-gpu-pipeline)' %s | FileCheck %s --check-prefix=PTX

// Programs through the GPU pipeline: what kernels each becomes. No host code is left with
// a loop over elements (mlax-check-gpu-mapped would fail the pipeline).

// An elementwise chain (mul, exp, abs, sqrt, sub) is one kernel: one thread per 4 elements
// (mlax-gpu-vectorize: 250 vectors, 8 blocks), each operand loaded once, one store; exp is a
// polynomial, abs and sqrt single PTX instructions.
// CHECK-LABEL: func.func @jit.elementwise(
// CHECK:         gpu.launch_func @jit.elementwise_kernel::@jit_elementwise_kernel blocks in (%c8, %c1, %c1) threads in (%c32, %c1, %c1)
// CHECK-NEXT:    return
// CHECK:         gpu.module @jit.elementwise_kernel
// CHECK-COUNT-2:   vector.load
// CHECK-NOT:       memref.load
// CHECK:           vector.store
// CHECK-NOT:     gpu.module
// PTX-LABEL:     gpu.binary @jit.elementwise_kernel
// PTX-SAME:        abs.f32{{.*}}sqrt.rn.f32
// PTX-NOT:         .extern
func.func @elementwise(%x: tensor<1000xf32>, %y: tensor<1000xf32>) -> tensor<1000xf32> {
  %0 = "mlax.mul"(%x, %y) : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
  %1 = "mlax.exp"(%0) : (tensor<1000xf32>) -> tensor<1000xf32>
  %2 = "mlax.abs"(%x) : (tensor<1000xf32>) -> tensor<1000xf32>
  %3 = "mlax.sqrt"(%2) : (tensor<1000xf32>) -> tensor<1000xf32>
  %4 = "mlax.sub"(%1, %3) : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
  return %4 : tensor<1000xf32>
}

// -----

// Softmax: one kernel (mlax-gpu-row-kernels): a block of 128 threads per row; the row max and
// the row sum are block reductions (gpu.all_reduce: shuffles, shared memory, bar.sync), exp(x -
// max) and the division stride over the row with the same threads; the row statistics stay in
// registers (their device buffer is written once, by each row's first thread).
// CHECK-LABEL: func.func @jit.softmax(
// CHECK:         %[[ROWS:.*]] = gpu.alloc () : memref<8xf32>
// CHECK-NEXT:    gpu.launch_func @jit.softmax_kernel::@jit_softmax_kernel blocks in (%c8, %c1, %c1) threads in (%c128, %c1, %c1)
// CHECK-NEXT:    gpu.dealloc %[[ROWS]]
// CHECK-NEXT:    return
// CHECK:         gpu.module @jit.softmax_kernel
// CHECK:           gpu.all_reduce maximumf
// CHECK:           gpu.all_reduce add
// CHECK-NOT:     gpu.module @jit.softmax
// PTX-LABEL:     gpu.binary @jit.softmax_kernel
// PTX-SAME:        shfl.sync.bfly{{.*}}bar.sync
// PTX-NOT:       gpu.binary @jit.softmax_kernel_
func.func @softmax(%x: tensor<8x100xf32>) -> tensor<8x100xf32> {
  %m = "mlax.reduce_max"(%x) {dimensions = array<i64: 1>} : (tensor<8x100xf32>) -> tensor<8xf32>
  %mb = "mlax.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 8, 100>} : (tensor<8xf32>) -> tensor<8x100xf32>
  %d = "mlax.sub"(%x, %mb) : (tensor<8x100xf32>, tensor<8x100xf32>) -> tensor<8x100xf32>
  %e = "mlax.exp"(%d) : (tensor<8x100xf32>) -> tensor<8x100xf32>
  %s = "mlax.reduce_sum"(%e) {dimensions = array<i64: 1>} : (tensor<8x100xf32>) -> tensor<8xf32>
  %sb = "mlax.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 8, 100>} : (tensor<8xf32>) -> tensor<8x100xf32>
  %r = "mlax.div"(%e, %sb) : (tensor<8x100xf32>, tensor<8x100xf32>) -> tensor<8x100xf32>
  return %r : tensor<8x100xf32>
}

// -----

// A batched matmul: one tiled kernel (mlax-gpu-matmul, no fill kernel), the batch on the
// grid's z, tiles staged in shared memory, TF32 tensor cores (matmul*.mlir has the details).
// CHECK-LABEL: func.func @jit.batched_matmul(
// CHECK:         gpu.launch_func @jit.batched_matmul_kernel::@jit_batched_matmul_kernel blocks in (%c1, %c1, %c4) threads in (%c128, %c1, %c1)
// CHECK-NEXT:    return
// CHECK:         gpu.module @jit.batched_matmul_kernel
// CHECK:           workgroup(
// CHECK:           nvvm.mma.sync
// PTX:           gpu.binary @jit.batched_matmul_kernel {{.*}}mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
func.func @batched_matmul(%a: tensor<4x16x32xf32>, %b: tensor<4x32x8xf32>) -> tensor<4x16x8xf32> {
  %0 = "mlax.dot_general"(%a, %b) {lhs_batch_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, result_dtype = f32, rhs_batch_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<4x16x32xf32>, tensor<4x32x8xf32>) -> tensor<4x16x8xf32>
  return %0 : tensor<4x16x8xf32>
}

// -----

// A small MLP forward and a sum of squares: the hidden layer is a temporary on the device;
// the bias and relu are one kernel; the sum of all elements (tanh and the square fused in) is
// one block of 160 threads and a block reduction (mlax-gpu-row-kernels).
// CHECK-LABEL: func.func @jit.mlp(
// CHECK:         %[[H:.*]] = gpu.alloc () : memref<16x64xf32>
// CHECK:         gpu.launch_func @jit.mlp_kernel_[[SUM:[0-9]+]]::@jit_mlp_kernel blocks in (%c1, %c1, %c1) threads in (%c160, %c1, %c1)  args(%arg3 : memref<16x10xf32>, %arg4 : memref<f32>)
// CHECK-NEXT:    gpu.dealloc %[[H]]
// CHECK-NEXT:    return
// CHECK:         gpu.module @jit.mlp_kernel_[[SUM]]
// CHECK:           gpu.all_reduce add
// CHECK:           memref.store %{{.*}}, %{{.*}}[] : memref<f32>
// PTX:           gpu.binary @jit.mlp_kernel_{{[0-9]+}} {{.*}}shfl.sync.bfly{{.*}}bar.sync
func.func @mlp(%x: tensor<16x32xf32>, %w1: tensor<32x64xf32>, %w2: tensor<64x10xf32>) -> (tensor<16x10xf32>, tensor<f32>) {
  %0 = "mlax.dot_general"(%x, %w1) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %half = "mlax.constant"() {value = dense<5.000000e-01> : tensor<16x64xf32>} : () -> tensor<16x64xf32>
  %1 = "mlax.add"(%0, %half) : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  %zero = "mlax.constant"() {value = dense<0.000000e+00> : tensor<16x64xf32>} : () -> tensor<16x64xf32>
  %2 = "mlax.max"(%1, %zero) : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  %3 = "mlax.dot_general"(%2, %w2) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<16x64xf32>, tensor<64x10xf32>) -> tensor<16x10xf32>
  %4 = "mlax.tanh"(%3) : (tensor<16x10xf32>) -> tensor<16x10xf32>
  %5 = "mlax.mul"(%4, %4) : (tensor<16x10xf32>, tensor<16x10xf32>) -> tensor<16x10xf32>
  %6 = "mlax.reduce_sum"(%5) {dimensions = array<i64: 0, 1>} : (tensor<16x10xf32>) -> tensor<f32>
  return %4, %6 : tensor<16x10xf32>, tensor<f32>
}

// -----

// A cumulative sum is a sequential loop nest (no linalg op): one thread runs it.
// CHECK-LABEL: func.func @jit.cumsum(
// CHECK-COUNT-2: gpu.launch_func
// CHECK-NEXT:    return
// CHECK:         gpu.module @jit.cumsum_kernel_0
// CHECK:           scf.for %{{.*}} = %c0 to %c8
// CHECK:             scf.for %{{.*}} = %c0 to %c100
func.func @cumsum(%x: tensor<8x100xf32>) -> tensor<8x100xf32> {
  %0 = "mlax.cumsum"(%x) {axis = 1 : i64, reverse = 0 : i64} : (tensor<8x100xf32>) -> tensor<8x100xf32>
  return %0 : tensor<8x100xf32>
}

// -----

// A comparison's bools are bytes in memory (mlax-widen-bool-buffers), as on the CPU.
// CHECK-LABEL: func.func @jit.compare(%arg0: memref<40xf32> {llvm.noalias}, %arg1: memref<40xf32> {llvm.noalias}, %arg2: memref<40xi8> {llvm.noalias})
// CHECK:         gpu.module @jit.compare_kernel
// CHECK:           %[[B:.*]] = arith.cmpf olt
// CHECK-COUNT-3:   arith.cmpf olt
// CHECK-NEXT:      %[[BYTE:.*]] = arith.extui %[[B]] : i1 to i8
// CHECK-COUNT-3:   arith.extui
// CHECK-NEXT:      %[[BYTES:.*]] = vector.from_elements %[[BYTE]],
// CHECK-NEXT:      vector.store %[[BYTES]], %{{.*}} : memref<40xi8>, vector<4xi8>
// PTX-LABEL:     gpu.binary @jit.compare_kernel
// PTX-SAME:        st.global.b32
func.func @compare(%x: tensor<40xf32>, %y: tensor<40xf32>) -> tensor<40xi1> {
  %0 = "mlax.compare"(%x, %y) {comparison_direction = "LT"} : (tensor<40xf32>, tensor<40xf32>) -> tensor<40xi1>
  return %0 : tensor<40xi1>
}
