// RUN: %mlax-opt --mlax-widen-bool-buffers %s | FileCheck %s

// Buffers of i1 become buffers of bytes: loads truncate, stores extend, views and
// allocations change type, globals get i8 initial values.
// CHECK-LABEL: memref.global "private" constant @mask : memref<3xi8> = dense<[1, 0, 1]>
memref.global "private" constant @mask : memref<3xi1> = dense<[true, false, true]>

// CHECK-LABEL: func.func @test_widen
// CHECK-SAME:    (%arg0: memref<3xi8>, %arg1: memref<3xf32>, %arg2: memref<3xi8>)
// CHECK:         %[[G:.*]] = memref.get_global @mask : memref<3xi8>
// CHECK:         %[[TMP:.*]] = memref.alloc() : memref<3xi8>
// CHECK:         scf.for %[[I:.*]] =
// CHECK:           %[[A8:.*]] = memref.load %arg0[%[[I]]] : memref<3xi8>
// CHECK:           %[[A:.*]] = arith.trunci %[[A8]] : i8 to i1
// CHECK:           %[[M8:.*]] = memref.load %[[G]][%[[I]]] : memref<3xi8>
// CHECK:           %[[M:.*]] = arith.trunci %[[M8]] : i8 to i1
// CHECK:           %[[AND:.*]] = arith.andi %[[A]], %[[M]] : i1
// CHECK:           %[[W:.*]] = arith.extui %[[AND]] : i1 to i8
// CHECK:           memref.store %[[W]], %[[TMP]][%[[I]]] : memref<3xi8>
// CHECK:         memref.copy %[[TMP]], %arg2 : memref<3xi8> to memref<3xi8>
func.func @test_widen(%a: memref<3xi1>, %f: memref<3xf32>, %out: memref<3xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %mask = memref.get_global @mask : memref<3xi1>
  %tmp = memref.alloc() : memref<3xi1>
  scf.for %i = %c0 to %c3 step %c1 {
    %x = memref.load %a[%i] : memref<3xi1>
    %m = memref.load %mask[%i] : memref<3xi1>
    %y = arith.andi %x, %m : i1
    memref.store %y, %tmp[%i] : memref<3xi1>
  }
  memref.copy %tmp, %out : memref<3xi1> to memref<3xi1>
  memref.dealloc %tmp : memref<3xi1>
  return
}

// A splat global and a strided view.
// CHECK-LABEL: memref.global "private" constant @ones : memref<2x2xi8> = dense<1>
memref.global "private" constant @ones : memref<2x2xi1> = dense<true>
// CHECK-LABEL: func.func @test_view
// CHECK:         memref.subview %{{.*}}[0, 1] [2, 1] [1, 1] : memref<2x2xi8> to memref<2xi8, strided<[2], offset: 1>>
func.func @test_view() -> i1 {
  %c0 = arith.constant 0 : index
  %g = memref.get_global @ones : memref<2x2xi1>
  %v = memref.subview %g[0, 1] [2, 1] [1, 1] : memref<2x2xi1> to memref<2xi1, strided<[2], offset: 1>>
  %x = memref.load %v[%c0] : memref<2xi1, strided<[2], offset: 1>>
  return %x : i1
}

// A splat stays a splat, however big the global (it is never spelled out element by element).
// CHECK-LABEL: memref.global "private" constant @test_big_splat : memref<4294967296x4xi8> = dense<1>
memref.global "private" constant @test_big_splat : memref<4294967296x4xi1> = dense<true>

// An llvm.func's signature holds LLVM types, never a memref: it stays as it is, and the
// memrefs of i1 in its body are widened as anywhere else.
// CHECK-LABEL: llvm.func @test_llvm_func
// CHECK-SAME:    (%arg0: i1) -> i1
// CHECK:         %[[M:.*]] = memref.alloca() : memref<1xi8>
// CHECK:         %[[X8:.*]] = memref.load %[[M]][%{{.*}}] : memref<1xi8>
// CHECK:         %[[X:.*]] = arith.trunci %[[X8]] : i8 to i1
// CHECK:         llvm.return %[[X]] : i1
llvm.func @test_llvm_func(%a: i1) -> i1 {
  %c0 = arith.constant 0 : index
  %m = memref.alloca() : memref<1xi1>
  memref.store %a, %m[%c0] : memref<1xi1>
  %x = memref.load %m[%c0] : memref<1xi1>
  llvm.return %x : i1
}
