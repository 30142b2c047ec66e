// RUN: %mlax-opt --mlax-outline-kernels %s | FileCheck %s
// RUN: %mlax-opt --mlax-outline-kernels %s | %mlax-opt | FileCheck %s
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-outline-kernels, convert-linalg-to-loops, convert-scf-to-cf, convert-math-to-llvm, finalize-memref-to-llvm, convert-arith-to-llvm, convert-cf-to-llvm, convert-func-to-llvm{use-bare-ptr-memref-call-conv=1}, reconcile-unrealized-casts)' %s | FileCheck %s --check-prefix=LLVM

// mlax-outline-kernels makes each linalg op one private noinline function, shared by the ops
// that recur: the two scalings of distinct buffers share @mlax_kernel_0 (their constant 2.0
// cloned in, each buffer noalias), the in-place scaling (its input is its output) gets a
// function of its own without noalias, and the op that occurs once gets one too (a function of
// its own keeps each of LLVM's per-function passes small). An operand that is a static view of
// a buffer (a row of it) is passed as the buffer, the view rebuilt inside the function.

// CHECK-LABEL: func.func @jit.f(
// CHECK:         call @mlax_kernel_0(%arg0, %[[A:.*]]) : (memref<16xf32>, memref<16xf32>) -> ()
// CHECK-NEXT:    call @mlax_kernel_0(%[[A]], %[[B:.*]]) : (memref<16xf32>, memref<16xf32>) -> ()
// CHECK-NEXT:    call @mlax_kernel_1(%[[B]], %[[B]]) : (memref<16xf32>, memref<16xf32>) -> ()
// CHECK-NEXT:    call @mlax_kernel_1(%[[A]], %[[A]]) : (memref<16xf32>, memref<16xf32>) -> ()
// CHECK-NEXT:    call @mlax_kernel_2(%[[A]], %[[B]], %arg1) : (memref<16xf32>, memref<16xf32>, memref<16xf32>) -> ()
// CHECK-NEXT:    call @mlax_kernel_3(%arg2, %arg3) : (memref<2x8xf32>, memref<8xf32>) -> ()
// CHECK-NOT:     linalg.
// CHECK:       func.func private @mlax_kernel_0(%arg0: memref<16xf32> {llvm.noalias}, %arg1: memref<16xf32> {llvm.noalias}) attributes {passthrough = ["noinline"]}
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    linalg.generic {{.*}} ins(%arg0 : memref<16xf32>) outs(%arg1 : memref<16xf32>)
// CHECK:           arith.mulf %{{.*}}, %[[TWO]] : f32
// CHECK:         return
// CHECK:       func.func private @mlax_kernel_1(%arg0: memref<16xf32>, %arg1: memref<16xf32>) attributes {passthrough = ["noinline"]}
// CHECK:       func.func private @mlax_kernel_2(
// CHECK:           math.exp
// CHECK:       func.func private @mlax_kernel_3(%arg0: memref<2x8xf32> {llvm.noalias}, %arg1: memref<8xf32> {llvm.noalias})
// CHECK-NEXT:    %[[ROW:.*]] = memref.subview %arg0[1, 0] [1, 8] [1, 1] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: 8>>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[ROW]] : memref<8xf32, strided<[1], offset: 8>>) outs(%arg1 : memref<8xf32>)

// The attributes reach the LLVM dialect; the kernels stay functions, their distinct buffers noalias.
// LLVM: llvm.func @mlax_kernel_0(%arg0: !llvm.ptr {llvm.noalias}, %arg1: !llvm.ptr {llvm.noalias}) attributes {passthrough = ["noinline"]
// LLVM: llvm.func @mlax_kernel_1(%arg0: !llvm.ptr, %arg1: !llvm.ptr) attributes {passthrough = ["noinline"]

#map = affine_map<(d0) -> (d0)>
module {
  func.func @jit.f(%x: memref<16xf32> {llvm.noalias}, %out: memref<16xf32> {llvm.noalias},
                   %rows: memref<2x8xf32> {llvm.noalias}, %row_out: memref<8xf32> {llvm.noalias}) {
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
    %row = memref.subview %rows[1, 0] [1, 8] [1, 1] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: 8>>
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%row : memref<8xf32, strided<[1], offset: 8>>) outs(%row_out : memref<8xf32>) {
    ^bb0(%i: f32, %o: f32):
      %n = arith.negf %i : f32
      linalg.yield %n : f32
    }
    memref.dealloc %a : memref<16xf32>
    memref.dealloc %b : memref<16xf32>
    return
  }
}
