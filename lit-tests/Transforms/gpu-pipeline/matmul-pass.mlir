// RUN: %mlax-opt --split-input-file --pass-pipeline='builtin.module(mlax-gpu-matmul)' %s | FileCheck %s
// RUN: %mlax-opt --split-input-file --pass-pipeline='builtin.module(mlax-gpu-matmul{f32-precision=highest})' %s | FileCheck %s --check-prefix=HIGHEST
// RUN: not %mlax-opt --split-input-file --pass-pipeline='builtin.module(mlax-gpu-matmul{f32-precision=fp8})' %s 2>&1 | FileCheck %s --check-prefix=BAD

// mlax-gpu-matmul alone, on the buffers the linalg stage and bufferization make of dot_general.

// The zero fill before a matmul is the accumulators' initial value: fill and matmul become
// one launch. At f32-precision=highest an f32 matmul is the SIMT kernel (true f32 FMAs).
// CHECK-LABEL: func.func @fill_then_matmul
// CHECK-NOT:     linalg.
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %{{.*}}, {{.*}} = %{{.*}}, {{.*}} = %{{.*}}) threads({{.*}}) in ({{.*}}) workgroup(
// CHECK-NOT:       memref.load %arg2
// CHECK:           scf.for
// CHECK:             nvvm.mma.sync
// CHECK:           memref.store %{{.*}}, %arg2
// CHECK:           gpu.terminator
// CHECK-NOT:     linalg.
// CHECK:         return
// HIGHEST-LABEL: func.func @fill_then_matmul
// HIGHEST-NOT:     nvvm.mma.sync
// HIGHEST:         math.fma {{.*}} : f32
// HIGHEST-NOT:     nvvm.mma.sync
// HIGHEST:         return
func.func @fill_then_matmul(%a: memref<96x80xf32>, %b: memref<80x72xf32>, %c: memref<96x72xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<96x72xf32>)
  linalg.matmul ins(%a, %b : memref<96x80xf32>, memref<80x72xf32>) outs(%c : memref<96x72xf32>)
  return
}

// -----

// Without a zero fill the kernel adds to the result's contents (loaded before the k loop);
// a fill of another value stays.
// CHECK-LABEL: func.func @accumulate
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%arg2 : memref<96x72xf32>)
// CHECK:         gpu.launch
// CHECK:           memref.load %arg2
// CHECK:           scf.for
func.func @accumulate(%a: memref<96x80xf32>, %b: memref<80x72xf32>, %c: memref<96x72xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<96x72xf32>)
  linalg.matmul ins(%a, %b : memref<96x80xf32>, memref<80x72xf32>) outs(%c : memref<96x72xf32>)
  return
}

// -----

// A kernel between the fill and the matmul that writes a buffer that is not a new temporary
// (here the result itself, through another value) keeps the fill.
// CHECK-LABEL: func.func @write_between
// CHECK:         linalg.fill
// CHECK:         linalg.generic
// CHECK:         gpu.launch
// CHECK:           memref.load %arg2
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @write_between(%a: memref<96x80xf32>, %b: memref<80x72xf32>, %c: memref<96x72xf32>, %d: memref<96x72xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<96x72xf32>)
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%d : memref<96x72xf32>) {
  ^bb0(%out: f32):
    linalg.yield %zero : f32
  }
  linalg.matmul ins(%a, %b : memref<96x80xf32>, memref<80x72xf32>) outs(%c : memref<96x72xf32>)
  return
}

// -----

// Dynamic sizes are left to the one-thread-per-element loops.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.matmul
func.func @dynamic(%a: memref<?x80xf32>, %b: memref<80x72xf32>, %c: memref<?x72xf32>) {
  linalg.matmul ins(%a, %b : memref<?x80xf32>, memref<80x72xf32>) outs(%c : memref<?x72xf32>)
  return
}

// -----

// bf16 widened to f32 temporaries: the kernel reads the bf16 buffers and the widening kernels
// and temporaries go. Where a temporary has another reader, nothing is folded: a TF32 matmul
// of the f32 temporaries.
// CHECK-LABEL: func.func @widened
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     linalg.generic
// CHECK:         gpu.launch
// CHECK:           memref.load %arg0{{.*}} : memref<16x32xbf16>
// CHECK:           nvvm.mma.sync {{.*}}#nvvm.mma_type<bf16>
// CHECK-NOT:     memref.dealloc
// CHECK:         return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @widened(%a: memref<16x32xbf16>, %b: memref<32x8xbf16>, %c: memref<16x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %wa = memref.alloc() : memref<16x32xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : memref<16x32xbf16>) outs(%wa : memref<16x32xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  %wb = memref.alloc() : memref<32x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : memref<32x8xbf16>) outs(%wb : memref<32x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  linalg.fill ins(%zero : f32) outs(%c : memref<16x8xf32>)
  linalg.matmul ins(%wa, %wb : memref<16x32xf32>, memref<32x8xf32>) outs(%c : memref<16x8xf32>)
  memref.dealloc %wa : memref<16x32xf32>
  memref.dealloc %wb : memref<32x8xf32>
  return
}

// -----

// CHECK-LABEL: func.func @widened_and_read_again
// CHECK-COUNT-2: linalg.generic
// CHECK:         gpu.launch
// CHECK:           llvm.call_intrinsic "llvm.nvvm.f2tf32.rna"
// CHECK:           nvvm.mma.sync {{.*}}#nvvm.mma_type<tf32>
// CHECK:         linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @widened_and_read_again(%a: memref<16x32xbf16>, %b: memref<32x8xbf16>, %c: memref<16x8xf32>, %d: memref<16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %wa = memref.alloc() : memref<16x32xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : memref<16x32xbf16>) outs(%wa : memref<16x32xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  %wb = memref.alloc() : memref<32x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : memref<32x8xbf16>) outs(%wb : memref<32x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  linalg.fill ins(%zero : f32) outs(%c : memref<16x8xf32>)
  linalg.matmul ins(%wa, %wb : memref<16x32xf32>, memref<32x8xf32>) outs(%c : memref<16x8xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%wa : memref<16x32xf32>) outs(%d : memref<16x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  memref.dealloc %wa : memref<16x32xf32>
  memref.dealloc %wb : memref<32x8xf32>
  return
}

// BAD: mlax-gpu-matmul: option 'f32-precision' must be one of tf32, highest, got 'fp8'
