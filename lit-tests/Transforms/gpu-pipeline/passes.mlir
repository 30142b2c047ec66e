// RUN: %mlax-opt --split-input-file --mlax-gpu-serial-kernels %s | FileCheck %s --check-prefix=SERIAL
// RUN: %mlax-opt --split-input-file --mlax-gpu-coalesce %s | FileCheck %s --check-prefix=COALESCE
// RUN: %mlax-opt --split-input-file --mlax-gpu-device-buffers %s | FileCheck %s --check-prefix=DEVICE
// RUN: %mlax-opt --split-input-file --mlax-gpu-native-math %s | FileCheck %s --check-prefix=MATH
// RUN: %mlax-opt --split-input-file --mlax-gpu-reductions-inner %s | FileCheck %s --check-prefix=INNER

// The GPU pipeline's own passes, one at a time.

// mlax-gpu-serial-kernels: a reduction to a scalar and a sequential loop get a one-iteration
// scf.parallel (one GPU thread); a parallel linalg op and a host loop around one do not.
// SERIAL-LABEL: func.func @serial
// SERIAL:         scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%c1{{.*}}) step (%c1{{.*}}) {
// SERIAL-NEXT:      linalg.generic {{.*}} iterator_types = ["reduction"]
// SERIAL:         scf.parallel
// SERIAL-NEXT:      scf.for
// SERIAL:         scf.for
// SERIAL-NOT:       scf.parallel
// SERIAL:           linalg.generic {{.*}} iterator_types = ["parallel"]
// SERIAL:         return
#id = affine_map<(d0) -> (d0)>
#to_scalar = affine_map<(d0) -> ()>
func.func @serial(%x: memref<8xf32>, %s: memref<f32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  linalg.generic {indexing_maps = [#id, #to_scalar], iterator_types = ["reduction"]} ins(%x : memref<8xf32>) outs(%s : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  }
  scf.for %i = %c1 to %c8 step %c1 {
    %prev = arith.subi %i, %c1 : index
    %a = memref.load %y[%prev] : memref<8xf32>
    %b = memref.load %x[%i] : memref<8xf32>
    %c = arith.addf %a, %b : f32
    memref.store %c, %y[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : memref<8xf32>) outs(%y : memref<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.mulf %in, %out : f32
      linalg.yield %0 : f32
    }
  }
  return
}

// -----

// mlax-gpu-coalesce: the outermost parallel loop's dimensions are reversed (the contiguous
// one first, for threadIdx.x); nested ones are left alone.
// COALESCE-LABEL: func.func @coalesce
// COALESCE:         scf.parallel (%[[J:.*]], %[[I:.*]]) = (%c0, %c0) to (%c16, %c4) step (%c1, %c1) {
// COALESCE-NEXT:      memref.load %arg0[%[[I]], %[[J]]]
// COALESCE:           scf.parallel (%[[K:.*]], %[[L:.*]]) = (%c0, %c0) to (%c4, %c16)
func.func @coalesce(%x: memref<4x16xf32>, %y: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
    %0 = memref.load %x[%i, %j] : memref<4x16xf32>
    memref.store %0, %y[%i, %j] : memref<4x16xf32>
    scf.parallel (%k, %l) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// mlax-gpu-device-buffers: host temporaries are device buffers, copies device copies, and a
// constant array is copied to the device where it is taken (freed at the end of the block).
// DEVICE-LABEL: func.func @device
// DEVICE:         %[[HOST:.*]] = memref.get_global @table : memref<4xf32>
// DEVICE-NEXT:    %[[TABLE:.*]] = gpu.alloc () : memref<4xf32>
// DEVICE-NEXT:    gpu.memcpy %[[TABLE]], %[[HOST]] : memref<4xf32>, memref<4xf32>
// DEVICE-NEXT:    %[[TMP:.*]] = gpu.alloc () : memref<4xf32>
// DEVICE-NEXT:    gpu.memcpy %[[TMP]], %[[TABLE]] : memref<4xf32>, memref<4xf32>
// DEVICE-NEXT:    gpu.memcpy %arg0, %[[TMP]] : memref<4xf32>, memref<4xf32>
// DEVICE-NEXT:    gpu.dealloc %[[TMP]] : memref<4xf32>
// DEVICE-NEXT:    gpu.dealloc %[[TABLE]] : memref<4xf32>
// DEVICE-NEXT:    return
// Buffers inside kernels are left alone.
// DEVICE:         gpu.func @k
// DEVICE-NEXT:      memref.alloca
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @device(%out: memref<4xf32>) {
  %0 = memref.get_global @table : memref<4xf32>
  %1 = memref.alloc() : memref<4xf32>
  memref.copy %0, %1 : memref<4xf32> to memref<4xf32>
  memref.copy %1, %out : memref<4xf32> to memref<4xf32>
  memref.dealloc %1 : memref<4xf32>
  return
}
gpu.module @kernels {
  gpu.func @k() kernel {
    %0 = memref.alloca() : memref<4xf32>
    gpu.return
  }
}

// -----

// mlax-gpu-native-math: libdevice calls that are one PTX instruction become LLVM intrinsics
// (their declarations go); the others stay, for mlax-check-gpu-mapped to refuse.
// MATH-LABEL: gpu.module @math
// MATH-NOT:     llvm.func @__nv_fabsf
// MATH-NOT:     llvm.func @__nv_sqrt(
// MATH:         llvm.func @__nv_sinf(f32) -> f32
// MATH-LABEL:   llvm.func @k
// MATH-NEXT:      %[[A:.*]] = llvm.intr.fabs(%arg0) : (f32) -> f32
// MATH-NEXT:      %[[S:.*]] = llvm.intr.sqrt(%arg1) : (f64) -> f64
// MATH-NEXT:      llvm.call @__nv_sinf(%[[A]])
gpu.module @math {
  llvm.func @__nv_fabsf(f32) -> f32
  llvm.func @__nv_sqrt(f64) -> f64
  llvm.func @__nv_sinf(f32) -> f32
  llvm.func @k(%x: f32, %y: f64) -> f32 {
    %0 = llvm.call @__nv_fabsf(%x) : (f32) -> f32
    %1 = llvm.call @__nv_sqrt(%y) : (f64) -> f64
    %2 = llvm.call @__nv_sinf(%0) : (f32) -> f32
    llvm.return %2 : f32
  }
}

// -----

// Integer abs is PTX's abs.s32/abs.s64: INT_MIN stays INT_MIN (not poison), as on the CPU.
// MATH-LABEL: gpu.module @integer_abs
// MATH-NOT:     llvm.func @__nv_abs
// MATH-LABEL:   llvm.func @k
// MATH-NEXT:      "llvm.intr.abs"(%arg0) <{is_int_min_poison = false}> : (i32) -> i32
// MATH-NEXT:      "llvm.intr.abs"(%arg1) <{is_int_min_poison = false}> : (i64) -> i64
gpu.module @integer_abs {
  llvm.func @__nv_abs(i32) -> i32
  llvm.func @__nv_llabs(i64) -> i64
  llvm.func @k(%x: i32, %y: i64) -> i32 {
    %0 = llvm.call @__nv_abs(%x) : (i32) -> i32
    %1 = llvm.call @__nv_llabs(%y) : (i64) -> i64
    llvm.return %0 : i32
  }
}

// -----

// mlax-gpu-reductions-inner: a column reduction's dimensions are swapped (the parallel one
// first), in the maps and in linalg.index; ops whose reductions are already inner are kept.
// INNER-DAG:   #[[$IN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// INNER-DAG:   #[[$OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// INNER-LABEL: func.func @columns
// INNER:         linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "reduction"]}
// INNER:           linalg.index 1 : index
// INNER:         linalg.generic {indexing_maps = [#[[IN2:.*]], #[[OUT2:.*]]], iterator_types = ["parallel", "reduction"]} ins(%arg1
func.func @columns(%x: memref<4x16xf32>, %y: memref<16x4xf32>, %out: memref<16xf32>, %rows: memref<16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<4x16xf32>) outs(%out : memref<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %i = linalg.index 0 : index
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%y : memref<16x4xf32>) outs(%rows : memref<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  }
  return
}
