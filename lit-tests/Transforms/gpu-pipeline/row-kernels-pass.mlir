// RUN: %mlax-opt --split-input-file --mlax-gpu-row-kernels %s | FileCheck %s

// mlax-gpu-row-kernels alone, on buffers: what it recognises and what it leaves alone.

// A row max with NaN-ignoring maxnumf keeps that kind (the CPU's semantics), its fill folded in
// as the initial value; a thread with no element holds NaN, maxnumf's identity.
// CHECK-LABEL: func.func @maxnum
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c8{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %c64{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK:           %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK:           scf.for {{.*}} iter_args(%{{.*}} = %[[NAN]]) -> (f32)
// CHECK:             arith.maxnumf
// CHECK:           %[[ALL:.*]] = gpu.all_reduce maxnumf %{{.*}} uniform
// CHECK:           arith.maxnumf %[[ALL]], %{{.*}} : f32
// CHECK-NOT:     linalg.
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @maxnum(%x: memref<8x40xf32>, %out: memref<8xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  linalg.fill ins(%ninf : f32) outs(%out : memref<8xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x40xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maxnumf %in, %acc : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// f16 max and i8 signed min are carried in 32 bits across threads (shuffles move 32 or 64):
// extf / extsi in, truncf / trunci out; the combiner is the same op on the wide type.
// CHECK-LABEL: func.func @narrow
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK:           arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK:           gpu.all_reduce maximumf %{{.*}} uniform
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK:           %[[MAX:.*]] = arith.constant 2147483647 : i32
// CHECK:           arith.extsi %{{.*}} : i8 to i32
// CHECK:           arith.minsi
// CHECK:           gpu.all_reduce minsi
// CHECK:           arith.trunci %{{.*}} : i32 to i8
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @narrow(%x: memref<8x40xf16>, %m: memref<8xf16>, %i: memref<8x40xi8>, %n: memref<8xi8>) {
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x40xf16>) outs(%m : memref<8xf16>) {
  ^bb0(%in: f16, %acc: f16):
    %0 = arith.maximumf %in, %acc : f16
    linalg.yield %0 : f16
  }
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%i : memref<8x40xi8>) outs(%n : memref<8xi8>) {
  ^bb0(%in: i8, %acc: i8):
    %0 = arith.minsi %acc, %in : i8
    linalg.yield %0 : i8
  }
  return
}

// -----

// Not recognised, left alone: a select-based max (the accumulator used twice), an argmax
// (two outputs), a column reduction (the input read across rows) and a matmul-like contraction.
// CHECK-LABEL: func.func @unknown
// CHECK-NOT:     gpu.launch
// CHECK-COUNT-4: linalg.generic
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @unknown(%x: memref<8x40xf32>, %out: memref<8xf32>, %idx: memref<8xi32>, %col: memref<40xf32>, %w: memref<40x8xf32>, %y: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x40xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.cmpf ogt, %in, %acc : f32
    %1 = arith.select %0, %in, %acc : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#rows, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x40xf32>) outs(%out, %idx : memref<8xf32>, memref<8xi32>) {
  ^bb0(%in: f32, %acc: f32, %i: i32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %0 = arith.cmpf ogt, %in, %acc : f32
    %1 = arith.select %0, %in, %acc : f32
    %2 = arith.select %0, %ji, %i : i32
    linalg.yield %1, %2 : f32, i32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x40xf32>) outs(%col : memref<40xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<8x40xf32>, memref<40x8xf32>) outs(%y : memref<8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %0, %acc : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// The run stops where a buffer it wrote would be read across rows: the sum and its scaling
// are one kernel; the transposed copy of the scaled rows is left to the elementwise path.
// A bias along the row (read, never written) joins the run.
// CHECK-LABEL: func.func @stops
// CHECK:         gpu.launch
// CHECK:           gpu.all_reduce add
// CHECK:           memref.load %arg1[%{{.*}}] : memref<40xf32>
// CHECK:           gpu.terminator
// CHECK:         linalg.generic {{.*}} ins(%arg2 : memref<8x40xf32>) outs(%arg3 : memref<40x8xf32>)
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @stops(%x: memref<8x40xf32>, %bias: memref<40xf32>, %y: memref<8x40xf32>, %t: memref<40x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<8xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x40xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#rows, #row, affine_map<(d0, d1) -> (d1)>, #rows], iterator_types = ["parallel", "parallel"]} ins(%x, %s, %bias : memref<8x40xf32>, memref<8xf32>, memref<40xf32>) outs(%y : memref<8x40xf32>) {
  ^bb0(%in: f32, %sum: f32, %b: f32, %o: f32):
    %0 = arith.divf %in, %sum : f32
    %1 = arith.addf %0, %b : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, #rows], iterator_types = ["parallel", "parallel"]} ins(%y : memref<8x40xf32>) outs(%t : memref<40x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  memref.dealloc %s : memref<8xf32>
  return
}

// -----

// A row value read from memory before the run writes it (a reduction accumulating into its
// output): every thread loads it, so a barrier comes before the first thread's store.
// CHECK-LABEL: func.func @accumulate
// CHECK:           memref.load %arg1
// CHECK:           gpu.all_reduce add
// CHECK:           gpu.barrier
// CHECK:           scf.if
// CHECK:             memref.store
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @accumulate(%x: memref<8x40xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x40xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  }
  return
}
