// RUN: %mlax-opt --split-input-file --mlax-gpu-vectorize %s | FileCheck %s

// mlax-gpu-vectorize on the scf.parallel nests of the gpu stage (after mlax-gpu-coalesce: the
// first dimension walks the contiguous one). Each iteration then handles a 16-byte vector.

// An elementwise body with a broadcast row (memref<1x64>) and a scalar per row (memref<8x1>):
// the first dimension runs over 64 / 4 vectors; contiguous accesses are aligned vector loads
// and stores, the scalar per row one load shared by the 4 lanes, the arithmetic once per lane.
// CHECK-LABEL: func.func @broadcast
// CHECK:         scf.parallel (%[[V:.*]], %[[I:.*]]) = (%c0, %c0) to (%c16, %c8) step (%c1, %c1) {
// CHECK-NEXT:      %[[BASE:.*]] = arith.muli %[[V]], %c4
// CHECK-NEXT:      %[[X:.*]] = vector.load %arg0[%[[I]], %[[BASE]]] {alignment = 16 : i64} : memref<8x64xf32>, vector<4xf32>
// CHECK-COUNT-4:   vector.extract %[[X]]
// CHECK-NEXT:      %[[ROW:.*]] = vector.load %{{.*}}[%c0, %[[BASE]]] {alignment = 16 : i64} : memref<1x64xf32>, vector<4xf32>
// CHECK-COUNT-4:   vector.extract %[[ROW]]
// CHECK-NEXT:      %[[S:.*]] = memref.load %{{.*}}[%[[I]], %c0] : memref<8x1xf32>
// CHECK-COUNT-4:   arith.mulf
// CHECK-COUNT-4:   arith.addf %{{.*}}, %[[S]]
// CHECK-NEXT:      %[[Y:.*]] = vector.from_elements
// CHECK-NEXT:      vector.store %[[Y]], %arg3[%[[I]], %[[BASE]]] {alignment = 16 : i64} : memref<8x64xf32>, vector<4xf32>
// CHECK-NEXT:      scf.reduce
func.func @broadcast(%x: memref<8x64xf32>, %row: memref<64xf32>, %col: memref<8xf32>, %y: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %r = memref.expand_shape %row [[0, 1]] output_shape [1, 64] : memref<64xf32> into memref<1x64xf32>
  %c = memref.expand_shape %col [[0, 1]] output_shape [8, 1] : memref<8xf32> into memref<8x1xf32>
  scf.parallel (%j, %i) = (%c0, %c0) to (%c64, %c8) step (%c1, %c1) {
    %0 = memref.load %x[%i, %j] : memref<8x64xf32>
    %1 = memref.load %r[%c0, %j] : memref<1x64xf32>
    %2 = memref.load %c[%i, %c0] : memref<8x1xf32>
    %3 = arith.mulf %0, %1 : f32
    %4 = arith.addf %3, %2 : f32
    memref.store %4, %y[%i, %j] : memref<8x64xf32>
    scf.reduce
  }
  return
}

// -----

// Lanes are 16 bytes over the widest element moved: 2 f64, 8 f16, 16 bytes (bools); a convert
// from f16 to f32 gets 4 lanes (16 bytes of floats, 8 of halves).
// CHECK-LABEL: func.func @widths
// CHECK:         vector.load %arg0{{.*}} {alignment = 16 : i64} : memref<32xf64>, vector<2xf64>
// CHECK:         vector.store {{.*}} {alignment = 16 : i64} : memref<32xf64>, vector<2xf64>
// CHECK:         vector.load %arg1{{.*}} {alignment = 16 : i64} : memref<32xf16>, vector<8xf16>
// CHECK-COUNT-8:   arith.negf
// CHECK:         vector.store {{.*}} {alignment = 16 : i64} : memref<32xf16>, vector<8xf16>
// CHECK:         vector.load %arg1{{.*}} {alignment = 8 : i64} : memref<32xf16>, vector<4xf16>
// CHECK:         vector.store {{.*}} {alignment = 16 : i64} : memref<32xf32>, vector<4xf32>
// CHECK:         vector.load %arg3{{.*}} {alignment = 16 : i64} : memref<32xi8>, vector<16xi8>
func.func @widths(%a: memref<32xf64>, %h: memref<32xf16>, %f: memref<32xf32>, %b: memref<32xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%i) = (%c0) to (%c32) step (%c1) {
    %0 = memref.load %a[%i] : memref<32xf64>
    %1 = arith.addf %0, %0 : f64
    memref.store %1, %a[%i] : memref<32xf64>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c32) step (%c1) {
    %0 = memref.load %h[%i] : memref<32xf16>
    %1 = arith.negf %0 : f16
    memref.store %1, %h[%i] : memref<32xf16>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c32) step (%c1) {
    %0 = memref.load %h[%i] : memref<32xf16>
    %1 = arith.extf %0 : f16 to f32
    memref.store %1, %f[%i] : memref<32xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c32) step (%c1) {
    %0 = memref.load %b[%i] : memref<32xi8>
    %1 = arith.trunci %0 : i8 to i1
    %2 = arith.xori %1, %1 : i1
    %3 = arith.extui %2 : i1 to i8
    memref.store %3, %b[%i] : memref<32xi8>
    scf.reduce
  }
  return
}

// -----

// A size 4 does not divide gets 2 lanes (8 bytes); an odd size keeps the scalar path. A fill
// (a constant stored) is vectorized too; the index itself (an iota) is the vector's base plus
// the lane.
// CHECK-LABEL: func.func @sizes
// CHECK:         scf.parallel (%{{.*}}) = (%c0) to (%c3{{.*}}) step (%c1)
// CHECK:           vector.store {{.*}} {alignment = 8 : i64} : memref<6xf32>, vector<2xf32>
// CHECK:         scf.parallel (%[[I:.*]]) = (%c0) to (%c7) step (%c1)
// CHECK-NEXT:      memref.store %{{.*}}, %arg1[%[[I]]] : memref<7xf32>
// CHECK:         scf.parallel (%[[V:.*]]) = (%c0) to (%c2{{.*}}) step (%c1)
// CHECK-NEXT:      %[[BASE:.*]] = arith.muli %[[V]], %c4
// CHECK-NEXT:      %[[I0:.*]] = arith.index_cast %[[BASE]] : index to i32
// CHECK:           %[[B1:.*]] = arith.addi %[[BASE]], %c1
// CHECK-NEXT:      arith.index_cast %[[B1]] : index to i32
// CHECK:           arith.addi %[[BASE]], %c3
// CHECK:           vector.store {{.*}} : memref<8xi32>, vector<4xi32>
func.func @sizes(%six: memref<6xf32>, %seven: memref<7xf32>, %iota: memref<8xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c6) step (%c1) {
    memref.store %zero, %six[%i] : memref<6xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c7) step (%c1) {
    memref.store %zero, %seven[%i] : memref<7xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %0 = arith.index_cast %i : index to i32
    memref.store %0, %iota[%i] : memref<8xi32>
    scf.reduce
  }
  return
}

// -----

// Views: an offset of 4 floats (16 bytes) and a row stride of 64 keep every vector aligned; an
// offset of 1 float does not, nor a row stride of 6 with 4 lanes (it gets 2). A buffer that
// is not known to be its own allocation (memref.view, a private function's argument) keeps
// the scalar path.
// CHECK-LABEL: func.func @views
// CHECK:         vector.load %{{.*}} : memref<8x32xf32, strided<[64, 1], offset: 4>>, vector<4xf32>
// CHECK:         memref.load %{{.*}} : memref<8x32xf32, strided<[64, 1], offset: 1>>
// CHECK:         vector.load %{{.*}} {alignment = 8 : i64} : memref<8x4xf32, strided<[6, 1]>>, vector<2xf32>
// CHECK:         memref.load %{{.*}} : memref<8xf32>
// CHECK-LABEL: func.func private @callee
// CHECK:         memref.load %{{.*}} : memref<8xf32>
func.func @views(%x: memref<8x64xf32>, %y: memref<8x32xf32>, %z: memref<8x6xf32>, %w: memref<8x4xf32>, %bytes: memref<64xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %aligned = memref.subview %x[0, 4] [8, 32] [1, 1] : memref<8x64xf32> to memref<8x32xf32, strided<[64, 1], offset: 4>>
  %shifted = memref.subview %x[0, 1] [8, 32] [1, 1] : memref<8x64xf32> to memref<8x32xf32, strided<[64, 1], offset: 1>>
  %narrow = memref.subview %z[0, 0] [8, 4] [1, 1] : memref<8x6xf32> to memref<8x4xf32, strided<[6, 1]>>
  %viewed = memref.view %bytes[%c32][] : memref<64xi8> to memref<8xf32>
  scf.parallel (%j, %i) = (%c0, %c0) to (%c32, %c8) step (%c1, %c1) {
    %0 = memref.load %aligned[%i, %j] : memref<8x32xf32, strided<[64, 1], offset: 4>>
    memref.store %0, %y[%i, %j] : memref<8x32xf32>
    scf.reduce
  }
  scf.parallel (%j, %i) = (%c0, %c0) to (%c32, %c8) step (%c1, %c1) {
    %0 = memref.load %shifted[%i, %j] : memref<8x32xf32, strided<[64, 1], offset: 1>>
    memref.store %0, %y[%i, %j] : memref<8x32xf32>
    scf.reduce
  }
  scf.parallel (%j, %i) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %0 = memref.load %narrow[%i, %j] : memref<8x4xf32, strided<[6, 1]>>
    memref.store %0, %w[%i, %j] : memref<8x4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %0 = memref.load %viewed[%i] : memref<8xf32>
    memref.store %0, %w[%i, %c0] : memref<8x4xf32>
    scf.reduce
  }
  return
}
func.func private @callee(%x: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %0 = memref.load %x[%i] : memref<8xf32>
    memref.store %0, %y[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

// What stays scalar: a transposed operand (the vectorized index at another position), a
// shifted index (x[i + 1]), a body with a loop (a reduction), a nest already mapped, and a
// nest inside another.
// CHECK-LABEL: func.func @scalar
// CHECK-NOT:     vector.
// CHECK:         return
func.func @scalar(%x: memref<8x8xf32>, %y: memref<8x8xf32>, %v: memref<9xf32>, %s: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%j, %i) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %0 = memref.load %x[%j, %i] : memref<8x8xf32>
    memref.store %0, %y[%i, %j] : memref<8x8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %k = arith.addi %i, %c1 : index
    %0 = memref.load %v[%k] : memref<9xf32>
    memref.store %0, %s[%i] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    scf.for %k = %c0 to %c8 step %c1 {
      %0 = memref.load %x[%i, %k] : memref<8x8xf32>
      %1 = memref.load %s[%i] : memref<8xf32>
      %2 = arith.addf %0, %1 : f32
      memref.store %2, %s[%i] : memref<8xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %0 = memref.load %s[%i] : memref<8xf32>
    memref.store %0, %s[%i] : memref<8xf32>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
      %0 = memref.load %x[%i, %j] : memref<8x8xf32>
      memref.store %0, %y[%i, %j] : memref<8x8xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}
