// RUN: %mlax-opt --mlax-parallel-loops %s | FileCheck %s
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-parallel-loops{min-work=1000000})' %s | FileCheck %s --check-prefix=HIGH

// 512 x 256 = 131072 iterations: parallel over the rows only, the columns a loop inside.
// CHECK-LABEL: func.func @test_big
// CHECK:         scf.parallel (%[[I:.*]]) = (%c0) to (%c512) step (%c1) {
// CHECK-NEXT:      scf.for %[[J:.*]] = %c0 to %c256 step %c1 {
// CHECK-NEXT:        %[[X:.*]] = memref.load %arg0[%[[I]], %[[J]]]
// CHECK-NEXT:        memref.store %[[X]], %arg1[%[[I]], %[[J]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.reduce
// With a higher threshold it is sequential.
// HIGH-LABEL:  func.func @test_big
// HIGH-NOT:      scf.parallel
// HIGH:          scf.for
// HIGH:            scf.for
func.func @test_big(%a: memref<512x256xf32>, %b: memref<512x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c512, %c256) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<512x256xf32>
    memref.store %x, %b[%i, %j] : memref<512x256xf32>
    scf.reduce
  }
  return
}

// 4 rows x 8 = 32 iterations (the inner reduction loop counts): sequential.
// CHECK-LABEL: func.func @test_small
// CHECK-NOT:     scf.parallel
// CHECK:         scf.for %[[I:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:      scf.for %[[K:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:        memref.load %arg0[%[[I]], %[[K]]]
func.func @test_small(%a: memref<4x8xf32>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %c8 step %c1 {
      %x = memref.load %a[%i, %k] : memref<4x8xf32>
      %y = memref.load %b[%i] : memref<4xf32>
      %z = arith.addf %x, %y : f32
      memref.store %z, %b[%i] : memref<4xf32>
    }
    scf.reduce
  }
  return
}

// A nested scf.parallel is serialized even inside a big one; dynamic bounds count as unknown
// work (sequential).
// CHECK-LABEL: func.func @test_nested
// CHECK:         scf.parallel (%{{.*}}) = (%c0) to (%c1024) step (%c1) {
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %c64 step %c1 {
// CHECK-NOT:     scf.parallel
// CHECK:         scf.for %{{.*}} = %c0 to %arg1 step %c1
func.func @test_nested(%a: memref<1024x64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      memref.store %zero, %a[%i, %j] : memref<1024x64xf32>
      scf.reduce
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %a[%i, %c0] : memref<1024x64xf32>
    scf.reduce
  }
  return
}
