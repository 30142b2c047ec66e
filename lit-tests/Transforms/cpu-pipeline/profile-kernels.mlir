// RUN: %mlax-opt --mlax-profile-kernels %s | FileCheck %s
// RUN: %mlax-opt --mlax-profile-kernels %s | %mlax-opt | FileCheck %s
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-profile-kernels, convert-linalg-to-loops, expand-strided-metadata, convert-scf-to-cf, finalize-memref-to-llvm, convert-arith-to-llvm, convert-index-to-llvm, convert-cf-to-llvm, convert-func-to-llvm{use-bare-ptr-memref-call-conv=1}, reconcile-unrealized-casts)' %s | FileCheck %s --check-prefix=LLVM

// mlax-profile-kernels times each kernel of a program on buffers: a library call, a linalg op,
// a loop (a span around the kernels of its body) and the kernels inside it. The module lists
// the kernels, indexed as their events are, with what each writes, the bytes it moves and
// the source lines of its ops.

// CHECK-LABEL: module attributes {mlax.profile_kernels = [
// CHECK-SAME:    {bytes = 48 : i64, kind = "sgemm", source = "model.py:3 (loss)", type = "f32[2,2]"},
// CHECK-SAME:    {bytes = 16 : i64, kind = "elementwise", source = "model.py:4 (loss); model.py:5 (loss)", type = "f32[2,2]"},
// CHECK-SAME:    {bytes = 0 : i64, kind = "loop", source = "model.py:6", type = ""},
// CHECK-SAME:    {bytes = 24 : i64, kind = "reduction", source = "model.py:7", type = "f32[2]"}]}
// CHECK:       func.func @jit.loss
// CHECK:         %[[T0:.*]] = call @mlax_profile_begin() : () -> i64
// CHECK-NEXT:    call @mlax_sgemm(
// CHECK-NEXT:    %[[K0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    call @mlax_profile_end(%[[K0]], %[[T0]]) : (i64, i64) -> ()
// CHECK-NEXT:    %[[T1:.*]] = call @mlax_profile_begin() : () -> i64
// CHECK-NEXT:    linalg.generic
// CHECK:         %[[K1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    call @mlax_profile_end(%[[K1]], %[[T1]])
// CHECK-NEXT:    %[[T2:.*]] = call @mlax_profile_begin() : () -> i64
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      %[[T3:.*]] = func.call @mlax_profile_begin() : () -> i64
// CHECK-NEXT:      linalg.generic
// CHECK:           %[[K3:.*]] = arith.constant 3 : i64
// CHECK-NEXT:      func.call @mlax_profile_end(%[[K3]], %[[T3]])
// CHECK:         %[[K2:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    call @mlax_profile_end(%[[K2]], %[[T2]])
// CHECK:       memref.global @mlax_profile_events : memref<131072x3xi64>
// CHECK:       memref.global @mlax_profile_count : memref<1xi64>
// CHECK:       func.func private @clock_gettime(i32, memref<2xi64>) -> i32
// CHECK:       func.func private @mlax_profile_end(%{{.*}}: i64, %{{.*}}: i64)
// CHECK:         memref.atomic_rmw addi

// The recording reaches LLVM as atomic appends to the runtime's external globals.
// LLVM: llvm.mlir.global external @mlax_profile_events() {addr_space = 0 : i32} : !llvm.array<131072 x array<3 x i64>>
// LLVM: llvm.atomicrmw add

#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
module {
func.func private @mlax_sgemm(i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
func.func @jit.loss(%a: memref<2x2xf32>, %b: memref<2x2xf32>, %out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %i32 = arith.constant 0 : i32
  %i64 = arith.constant 2 : i64
  %one = arith.constant 1.0 : f32
  %c = memref.alloc() : memref<2x2xf32>
  %pa = memref.extract_aligned_pointer_as_index %a : memref<2x2xf32> -> index
  %pb = memref.extract_aligned_pointer_as_index %b : memref<2x2xf32> -> index
  %pc = memref.extract_aligned_pointer_as_index %c : memref<2x2xf32> -> index
  %ia = arith.index_cast %pa : index to i64
  %ib = arith.index_cast %pb : index to i64
  %ic = arith.index_cast %pc : index to i64
  %qa = llvm.inttoptr %ia : i64 to !llvm.ptr
  %qb = llvm.inttoptr %ib : i64 to !llvm.ptr
  %qc = llvm.inttoptr %ic : i64 to !llvm.ptr
  call @mlax_sgemm(%i32, %i32, %i32, %i64, %i64, %i64, %one, %qa, %i64, %qb, %i64, %one, %qc, %i64) : (i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> () loc("loss"("model.py":3:5))
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%c : memref<2x2xf32>) outs(%c : memref<2x2xf32>) {
  ^bb0(%in: f32, %o: f32):
    %t = math.tanh %in : f32 loc("loss"("model.py":4:9))
    %m = arith.mulf %t, %t : f32 loc("loss"("model.py":5:9))
    linalg.yield %m : f32 loc("loss"("model.py":5:9))
  } loc("loss"("model.py":4:9))
  scf.for %i = %c0 to %c3 step %c1 {
    linalg.generic {indexing_maps = [#map, #row], iterator_types = ["parallel", "reduction"]} ins(%c : memref<2x2xf32>) outs(%out : memref<2xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32 loc("model.py":7:3)
      linalg.yield %s : f32 loc("model.py":7:3)
    } loc("model.py":7:3)
  } loc("model.py":6:3)
  memref.dealloc %c : memref<2x2xf32>
  return
}
}
