// RUN: %mlax-opt --mlax-outline-kernels %s | FileCheck %s
// RUN: %mlax-opt --mlax-outline-kernels %s | %mlax-opt | FileCheck %s
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-outline-kernels, convert-linalg-to-loops, convert-scf-to-cf, convert-math-to-llvm, finalize-memref-to-llvm, convert-arith-to-llvm, convert-cf-to-llvm, convert-func-to-llvm{use-bare-ptr-memref-call-conv=1}, reconcile-unrealized-casts)' %s | FileCheck %s --check-prefix=LLVM

// mlax-outline-kernels makes each linalg op that recurs one private noinline function: the two
// scalings of distinct buffers share @mlax_kernel_0 (their constant 2.0 cloned in, each buffer
// noalias), the in-place scaling (its input is its output) gets a function of its own without
// noalias, and the op that occurs once stays where it is.

// CHECK-LABEL: func.func @jit.f(
// CHECK:         call @mlax_kernel_0(%arg0, %[[A:.*]]) : (memref<16xf32>, memref<16xf32>) -> ()
// CHECK-NEXT:    call @mlax_kernel_0(%[[A]], %[[B:.*]]) : (memref<16xf32>, memref<16xf32>) -> ()
// CHECK-NEXT:    call @mlax_kernel_1(%[[B]], %[[B]]) : (memref<16xf32>, memref<16xf32>) -> ()
// CHECK-NEXT:    call @mlax_kernel_1(%[[A]], %[[A]]) : (memref<16xf32>, memref<16xf32>) -> ()
// CHECK-NEXT:    linalg.generic
// CHECK:           math.exp
// CHECK:       func.func private @mlax_kernel_0(%arg0: memref<16xf32> {llvm.noalias}, %arg1: memref<16xf32> {llvm.noalias}) attributes {passthrough = ["noinline"]}
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    linalg.generic {{.*}} ins(%arg0 : memref<16xf32>) outs(%arg1 : memref<16xf32>)
// CHECK:           arith.mulf %{{.*}}, %[[TWO]] : f32
// CHECK:         return
// CHECK:       func.func private @mlax_kernel_1(%arg0: memref<16xf32>, %arg1: memref<16xf32>) attributes {passthrough = ["noinline"]}

// The attributes reach the LLVM dialect; the kernels stay functions, their distinct buffers noalias.
// LLVM: llvm.func @mlax_kernel_0(%arg0: !llvm.ptr {llvm.noalias}, %arg1: !llvm.ptr {llvm.noalias}) attributes {passthrough = ["noinline"]
// LLVM: llvm.func @mlax_kernel_1(%arg0: !llvm.ptr, %arg1: !llvm.ptr) attributes {passthrough = ["noinline"]

#map = affine_map<(d0) -> (d0)>
module {
  func.func @jit.f(%x: memref<16xf32> {llvm.noalias}, %out: memref<16xf32> {llvm.noalias}) {
    %two = arith.constant 2.0 : f32
    %a = memref.alloc() : memref<16xf32>
    %b = memref.alloc() : memref<16xf32>
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : memref<16xf32>) outs(%a : memref<16xf32>) {
    ^bb0(%i: f32, %o: f32):
      %m = arith.mulf %i, %two : f32
      linalg.yield %m : f32
    }
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%a : memref<16xf32>) outs(%b : memref<16xf32>) {
    ^bb0(%i: f32, %o: f32):
      %m = arith.mulf %i, %two : f32
      linalg.yield %m : f32
    }
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%b : memref<16xf32>) outs(%b : memref<16xf32>) {
    ^bb0(%i: f32, %o: f32):
      %m = arith.mulf %i, %two : f32
      linalg.yield %m : f32
    }
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%a : memref<16xf32>) outs(%a : memref<16xf32>) {
    ^bb0(%i: f32, %o: f32):
      %m = arith.mulf %i, %two : f32
      linalg.yield %m : f32
    }
    linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%a, %b : memref<16xf32>, memref<16xf32>) outs(%out : memref<16xf32>) {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %s = arith.addf %i, %j : f32
      %e = math.exp %s : f32
      linalg.yield %e : f32
    }
    memref.dealloc %a : memref<16xf32>
    memref.dealloc %b : memref<16xf32>
    return
  }
}
