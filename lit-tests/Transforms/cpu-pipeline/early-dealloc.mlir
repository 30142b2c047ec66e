// RUN: %mlax-opt --mlax-early-dealloc %s | FileCheck %s

// The deallocation pipeline frees a block's buffers at its end; mlax-early-dealloc moves each
// dealloc to just after the last op that uses the buffer or a value derived from it.


// CHECK-LABEL: func.func @test_after_last_use
// CHECK:         %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%arg0 : memref<4xf32>) outs(%[[A]] : memref<4xf32>)
// CHECK:         %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[A]] : memref<4xf32>) outs(%[[B]] : memref<4xf32>)
// CHECK:         memref.dealloc %[[A]]
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[B]] : memref<4xf32>) outs(%arg1 : memref<4xf32>)
// CHECK:         memref.dealloc %[[B]]
// CHECK-NEXT:    return
func.func @test_after_last_use(%x: memref<4xf32>, %out: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %e = math.exp %i : f32
    linalg.yield %e : f32
  }
  %b = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %e = math.sin %i : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%b : memref<4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %e = math.cos %i : f32
    linalg.yield %e : f32
  }
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return
}

// A pointer taken from the buffer (as mlax-linalg-to-blas passes it to BLAS) keeps it alive
// until the call that reads it; so does a view of it used inside a loop.
// CHECK-LABEL: func.func @test_derived_values
// CHECK:         %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK:         call @consume(%{{.*}}) : (!llvm.ptr) -> ()
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK-NEXT:    %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT:    %[[V:.*]] = memref.subview %[[B]][0] [4] [1]
// CHECK:         scf.for
// CHECK:           memref.store %{{.*}}, %[[V]]
// CHECK:         }
// CHECK-NEXT:    memref.dealloc %[[B]]
// CHECK-NEXT:    return
func.func private @consume(!llvm.ptr)
func.func @test_derived_values(%n: index) {
  %a = memref.alloc() : memref<8xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<8xf32> -> index
  %i = arith.index_cast %p : index to i64
  %ptr = llvm.inttoptr %i : i64 to !llvm.ptr
  func.call @consume(%ptr) : (!llvm.ptr) -> ()
  %b = memref.alloc() : memref<8xf32>
  %v = memref.subview %b[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.for %k = %c0 to %n step %c1 {
    memref.store %one, %v[%c0] : memref<4xf32, strided<[1]>>
  }
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %b : memref<8xf32>
  return
}

// Nothing moves for a buffer the block did not allocate (an argument), nor for a dealloc
// already right after the last use.
// CHECK-LABEL: func.func @test_no_move
// CHECK:         linalg.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %arg0
// CHECK-NEXT:    memref.dealloc %arg1
// CHECK-NEXT:    return
func.func @test_no_move(%x: memref<4xf32>, %y: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  memref.dealloc %x : memref<4xf32>
  memref.dealloc %y : memref<4xf32>
  return
}

// An address stored in memory (a host callback's record) keeps the buffer alive until the
// memory is read; a flag loaded from a buffer and read by the terminator never moves the
// dealloc past the terminator.
// CHECK-LABEL: func.func @test_address_in_memory
// CHECK:         %[[A:.*]] = memref.alloc() : memref<f32>
// CHECK:         memref.store %{{.*}}, %[[R:.*]][%{{.*}}] : memref<1xi64>
// CHECK:         %[[L:.*]] = memref.load %[[R]]
// CHECK-NEXT:    call @read(%[[L]]) : (i64) -> ()
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK-NEXT:    return
func.func private @read(i64)
func.func @test_address_in_memory() {
  %c0 = arith.constant 0 : index
  %record = memref.alloca() : memref<1xi64>
  %a = memref.alloc() : memref<f32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<f32> -> index
  %i = arith.index_cast %p : index to i64
  memref.store %i, %record[%c0] : memref<1xi64>
  %l = memref.load %record[%c0] : memref<1xi64>
  func.call @read(%l) : (i64) -> ()
  memref.dealloc %a : memref<f32>
  return
}

// CHECK-LABEL: func.func @test_flag_read_by_terminator
// CHECK:         %[[F:.*]] = memref.alloc() : memref<i1>
// CHECK:         memref.load %[[F]]
// CHECK-NEXT:    memref.dealloc %[[F]]
// CHECK-NEXT:    scf.condition
func.func @test_flag_read_by_terminator(%x: memref<i1>) {
  scf.while : () -> () {
    %f = memref.alloc() : memref<i1>
    memref.copy %x, %f : memref<i1> to memref<i1>
    %b = memref.load %f[] : memref<i1>
    memref.dealloc %f : memref<i1>
    scf.condition(%b)
  } do {
    scf.yield
  }
  return
}
