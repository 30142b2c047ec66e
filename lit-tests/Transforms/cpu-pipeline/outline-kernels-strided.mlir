// RUN: %mlax-opt --mlax-outline-kernels %s | FileCheck %s

// A kernel whose body reads a strided view (a row of a loop's stacked buffer) stays inline:
// the bare-pointer calling convention passes identity layouts only.

// CHECK-LABEL: func.func @jit.f
// CHECK-NOT:     call @mlax_kernel
// CHECK:         linalg.generic
// CHECK:           memref.load %{{.*}} : memref<2xi32, strided<[1], offset: ?>>
// CHECK:         linalg.generic
// CHECK:           memref.load %{{.*}} : memref<2xi32, strided<[1], offset: ?>>
// CHECK-NOT:   func.func private @mlax_kernel

#map = affine_map<(d0) -> (d0)>
module {
  func.func @jit.f(%rows: memref<3x2xi32> {llvm.noalias}, %out: memref<1xi32> {llvm.noalias}, %out2: memref<1xi32> {llvm.noalias}) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %row = memref.subview %rows[%c1, 0] [1, 2] [1, 1] : memref<3x2xi32> to memref<2xi32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%out : memref<1xi32>) {
    ^bb0(%o: i32):
      %v = memref.load %row[%c0] : memref<2xi32, strided<[1], offset: ?>>
      linalg.yield %v : i32
    }
    linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%out2 : memref<1xi32>) {
    ^bb0(%o: i32):
      %v = memref.load %row[%c0] : memref<2xi32, strided<[1], offset: ?>>
      linalg.yield %v : i32
    }
    return
  }
}
