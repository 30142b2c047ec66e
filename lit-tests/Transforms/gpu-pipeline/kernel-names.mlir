// RUN: %mlax-opt --mlax-gpu-kernel-names %s | FileCheck %s

// Outlined kernels are named after their host function, whose `jit.` prefix is no PTX
// identifier: each kernel gets `_` for every other character and its launches follow; the
// gpu.module keeps its name (it never reaches the PTX) and valid names stay as they are.
// CHECK-LABEL: func.func @jit.f
// CHECK:         gpu.launch_func @jit.f_kernel::@jit_f_kernel
// CHECK:         gpu.launch_func @other::@already_valid$1
// CHECK:       gpu.module @jit.f_kernel
// CHECK:         gpu.func @jit_f_kernel(%{{.*}}: memref<4xf32>) kernel
// CHECK:       gpu.module @other
// CHECK:         gpu.func @already_valid$1() kernel
module attributes {gpu.container_module} {
  func.func @jit.f(%arg0: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @jit.f_kernel::@jit.f_kernel blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%arg0 : memref<4xf32>)
    gpu.launch_func @other::@already_valid$1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  gpu.module @jit.f_kernel {
    gpu.func @jit.f_kernel(%arg0: memref<4xf32>) kernel {
      %0 = gpu.thread_id x
      %cst = arith.constant 1.0 : f32
      memref.store %cst, %arg0[%0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @other {
    gpu.func @already_valid$1() kernel {
      gpu.return
    }
  }
}
