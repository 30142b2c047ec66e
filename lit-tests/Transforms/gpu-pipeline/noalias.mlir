// RUN: %mlax-opt --split-input-file --mlax-gpu-noalias %s | FileCheck %s

// mlax-gpu-noalias on outlined kernels: an argument gets llvm.noalias when every launch passes
// a buffer of its own (an argument the ABI marks llvm.noalias, a gpu.alloc) that no other
// argument views, and llvm.readonly too when the kernel only reads it.

// Distinct buffers: the entry's arguments and a temporary; the kernel reads %x (through a
// view) and the temporary, writes %y. %z is an argument without llvm.noalias: nothing.
// CHECK-LABEL: gpu.module @distinct
// CHECK:         gpu.func @k(%arg0: index, %arg1: memref<8xf32> {llvm.noalias, llvm.readonly}, %arg2: memref<8xf32> {llvm.noalias, llvm.readonly}, %arg3: memref<8xf32> {llvm.noalias}, %arg4: memref<8xf32>)
module attributes {gpu.container_module} {
  func.func @jit.f(%x: memref<8xf32> {llvm.noalias}, %y: memref<8xf32> {llvm.noalias}, %z: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %t = gpu.alloc () : memref<8xf32>
    %v = memref.expand_shape %x [[0, 1]] output_shape [1, 8] : memref<8xf32> into memref<1x8xf32>
    %w = memref.collapse_shape %v [[0, 1]] : memref<1x8xf32> into memref<8xf32>
    gpu.launch_func @distinct::@k blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%c8 : index, %w : memref<8xf32>, %t : memref<8xf32>, %y : memref<8xf32>, %z : memref<8xf32>)
    gpu.dealloc %t : memref<8xf32>
    return
  }
  gpu.module @distinct {
    gpu.func @k(%n: index, %a: memref<8xf32>, %t: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.subview %a[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
      %0 = memref.load %v[%i] : memref<4xf32, strided<[1]>>
      %1 = memref.load %t[%i] : memref<8xf32>
      %2 = arith.addf %0, %1 : f32
      memref.store %2, %b[%i] : memref<8xf32>
      memref.store %2, %c[%i] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// Two views of one buffer (two halves of %x) are not distinct: neither gets an attribute; %y is
// still noalias. A kernel launched twice keeps only what both launches prove: its second
// argument is a buffer of its own in the first launch, an argument without llvm.noalias in
// the second.
// CHECK-LABEL: gpu.module @views
// CHECK:         gpu.func @k(%arg0: memref<4xf32, strided<[1]>>, %arg1: memref<4xf32, strided<[1], offset: 4>>, %arg2: memref<8xf32> {llvm.noalias})
// CHECK-LABEL: gpu.module @twice
// CHECK:         gpu.func @k(%arg0: memref<8xf32> {llvm.noalias}, %arg1: memref<8xf32>)
module attributes {gpu.container_module} {
  func.func @jit.g(%x: memref<8xf32> {llvm.noalias}, %y: memref<8xf32> {llvm.noalias}, %z: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %lo = memref.subview %x[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
    %hi = memref.subview %x[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
    gpu.launch_func @views::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%lo : memref<4xf32, strided<[1]>>, %hi : memref<4xf32, strided<[1], offset: 4>>, %y : memref<8xf32>)
    %t = gpu.alloc () : memref<8xf32>
    gpu.launch_func @twice::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<8xf32>, %t : memref<8xf32>)
    gpu.launch_func @twice::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%t : memref<8xf32>, %z : memref<8xf32>)
    gpu.dealloc %t : memref<8xf32>
    return
  }
  gpu.module @views {
    gpu.func @k(%a: memref<4xf32, strided<[1]>>, %b: memref<4xf32, strided<[1], offset: 4>>, %c: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %0 = memref.load %a[%i] : memref<4xf32, strided<[1]>>
      memref.store %0, %b[%i] : memref<4xf32, strided<[1], offset: 4>>
      memref.store %0, %c[%i] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @twice {
    gpu.func @k(%a: memref<8xf32>, %b: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %0 = memref.load %b[%i] : memref<8xf32>
      memref.store %0, %a[%i] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// Buffers the host code cannot trace to an allocation (a loop-carried buffer, memref.view of
// bytes) get nothing; a kernel with workgroup memory keeps it unannotated and its arguments
// are still marked.
// CHECK-LABEL: gpu.module @carried
// CHECK:         gpu.func @k(%arg0: memref<8xf32>, %arg1: memref<8xf32>, %arg2: memref<8xf32> {llvm.noalias, llvm.readonly}) workgroup(%arg3 : memref<32xf32, #gpu.address_space<workgroup>>)
module attributes {gpu.container_module} {
  func.func @jit.h(%x: memref<8xf32> {llvm.noalias}, %bytes: memref<64xi8> {llvm.noalias}, %y: memref<8xf32> {llvm.noalias}) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %view = memref.view %bytes[%c0][] : memref<64xi8> to memref<8xf32>
    %r = scf.for %k = %c0 to %c2 step %c1 iter_args(%carry = %x) -> (memref<8xf32>) {
      gpu.launch_func @carried::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%carry : memref<8xf32>, %view : memref<8xf32>, %y : memref<8xf32>)
      scf.yield %carry : memref<8xf32>
    }
    return
  }
  gpu.module @carried {
    gpu.func @k(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>) workgroup(%w : memref<32xf32, #gpu.address_space<workgroup>>) kernel {
      %i = gpu.thread_id x
      %0 = memref.load %c[%i] : memref<8xf32>
      memref.store %0, %w[%i] : memref<32xf32, #gpu.address_space<workgroup>>
      memref.store %0, %a[%i] : memref<8xf32>
      memref.store %0, %b[%i] : memref<8xf32>
      gpu.return
    }
  }
}
