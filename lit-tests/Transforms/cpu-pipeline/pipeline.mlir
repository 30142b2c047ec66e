// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-cpu-pipeline{to=linalg})' %s | FileCheck %s --check-prefix=LINALG
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-cpu-pipeline{to=buffers})' %s | FileCheck %s --check-prefix=BUFFERS
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-cpu-pipeline{to=loops})' %s | FileCheck %s --check-prefix=LOOPS
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-cpu-pipeline)' %s | FileCheck %s --check-prefix=LLVM
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-cpu-pipeline{to=buffers blas=false})' %s | FileCheck %s --check-prefix=NOBLAS
// RUN: not %mlax-opt --pass-pipeline='builtin.module(mlax-cpu-pipeline{to=asm})' %s 2>&1 | FileCheck %s --check-prefix=BADSTAGE

// One function through the stages of the CPU pipeline: a matmul, an elementwise chain on
// its result, a row reduction and a comparison producing bools.

// LINALG-LABEL: func.func @f(%arg0: tensor<4x8xf32>, %arg1: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4xi1>)
// LINALG:         %[[MM:.*]] = linalg.matmul ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8x16xf32>)
// The tanh (a rational approximation in arith, by mlax-approximate-math) and the square
// are fused into one generic.
// LINALG:         linalg.generic {{.*}} ins(%[[MM]] : tensor<4x16xf32>)
// LINALG-NOT:       math.tanh
// LINALG:           arith.cmpf uno
// LINALG:           linalg.yield {{.*}} : f32
// LINALG-NEXT:    } -> tensor<4x16xf32>
// LINALG:         iterator_types = ["parallel", "reduction"]
// LINALG:         arith.cmpf ogt
// LINALG-NOT:     mlax.

// Results are out-parameters written in place; the matmul is a BLAS call; each kernel is a
// function (mlax-outline-kernels); the temporary of the reduction is freed.
// BUFFERS-LABEL: func.func @jit.f(%arg0: memref<4x8xf32> {llvm.noalias}, %arg1: memref<8x16xf32> {llvm.noalias}, %arg2: memref<4x16xf32> {llvm.noalias}, %arg3: memref<4xi1> {llvm.noalias})
// BUFFERS:         call @mlax_sgemm(
// BUFFERS-NEXT:    call @[[EPILOGUE:mlax_kernel_[0-9]+]](%arg2, %arg2) : (memref<4x16xf32>, memref<4x16xf32>) -> ()
// BUFFERS-NEXT:    %[[TMP:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// BUFFERS:         call @{{.*}}(%[[TMP]], %arg3) : (memref<4xf32>, memref<4xi1>) -> ()
// BUFFERS-NEXT:    memref.dealloc %[[TMP]]
// BUFFERS-NEXT:    return
// BUFFERS:       func.func private @[[EPILOGUE]](
// BUFFERS:         linalg.generic {{.*}} ins(%arg1 : memref<4x16xf32>) outs(%arg1 : memref<4x16xf32>)

// NOBLAS-NOT:    call @mlax_sgemm
// NOBLAS:        linalg.generic {{.*}} ins(%arg0, %arg1 : memref<4x8xf32>, memref<8x16xf32>) outs(%arg2 : memref<4x16xf32>)
// NOBLAS:          arith.mulf

// Loops; the bool result is a buffer of bytes.
// LOOPS-LABEL: func.func @jit.f({{.*}}, %arg3: memref<4xi8> {llvm.noalias})
// LOOPS:         scf.for
// LOOPS:           arith.mulf
// LOOPS:         func.func private @{{.*}}(%arg0: memref<4xf32> {llvm.noalias}, %arg1: memref<4xi8> {llvm.noalias})
// LOOPS:         %[[C:.*]] = arith.cmpf ogt
// LOOPS-NEXT:    %[[B:.*]] = arith.extui %[[C]] : i1 to i8
// LOOPS-NEXT:    memref.store %[[B]], %arg1
// LOOPS-NOT:     linalg.

// The LLVM dialect: every buffer is one bare pointer.
// LLVM:         llvm.func @mlax_sgemm(i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
// LLVM:         llvm.func @jit.f(%arg0: !llvm.ptr {llvm.noalias}, %arg1: !llvm.ptr {llvm.noalias}, %arg2: !llvm.ptr {llvm.noalias}, %arg3: !llvm.ptr {llvm.noalias})
// LLVM-NOT:     memref.
// LLVM-NOT:     scf.

// BADSTAGE: mlax-cpu-pipeline: option 'to' must be one of linalg, buffers, loops, llvm, got 'asm'

func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4xi1>) {
  %0 = "mlax.dot_general"(%x, %w) {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, result_dtype = f32, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "mlax.tanh"(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = "mlax.mul"(%1, %1) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = "mlax.reduce_max"(%x) {dimensions = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %z = "mlax.constant"() {value = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %4 = "mlax.compare"(%3, %z) {comparison_direction = "GT"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %2, %4 : tensor<4x16xf32>, tensor<4xi1>
}
