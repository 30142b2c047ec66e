// RUN: %mlax-opt %s --split-input-file --verify-diagnostics --mlax-check-gpu-mapped
// RUN: not %mlax-opt %s --split-input-file --mlax-check-gpu-mapped='mapped=false' 2>/dev/null | FileCheck %s
// RUN: not %mlax-opt %s --split-input-file --mlax-check-gpu-mapped='mapped=false' 2>&1 | FileCheck %s --check-prefix=ERR

// mlax-check-gpu-mapped on its own: host code that would run on the host what belongs on
// the GPU. With mapped=false (the end of the buffers stage) loops and memory accesses are
// not checked yet, only library calls and OpenMP (the OpenMP op is then the only error).
// ERR-NOT: error: {{[^t]}}

// A loop nest convert-parallel-loops-to-gpu did not map.
// CHECK-LABEL: func.func @unmapped
func.func @unmapped(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error@+1 {{scf.parallel was not mapped to a GPU kernel and would touch device memory on the host: use backend="cpu" or backend="xla" for this program}}
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %0 = memref.load %x[%i] : memref<4xf32>
    memref.store %0, %x[%i] : memref<4xf32>
    scf.reduce
  }
  return
}

// -----

// A kernel's loads are fine; the host's copy of a buffer is not.
// CHECK-LABEL: func.func @host_copy
func.func @host_copy(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error@+1 {{memref.copy was not mapped to a GPU kernel}}
  memref.copy %x, %y : memref<4xf32> to memref<4xf32>
  return
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %0 = memref.load %x[%c0] : memref<4xf32>
      memref.store %0, %x[%c0] : memref<4xf32>
      gpu.return
    }
  }
  func.func @mapped(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    return
  }
}

// -----

// A grid over CUDA's limits (65535 blocks along y and z) would fail at launch.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel {
      gpu.return
    }
  }
  func.func @tall() {
    %c1 = arith.constant 1 : index
    %many = arith.constant 70000 : index
    // expected-error@+1 {{gpu.launch_func of 70000 blocks along y is over CUDA's limit of 65535}}
    gpu.launch_func @kernels::@k blocks in (%c1, %many, %c1) threads in (%c1, %c1, %c1)
    return
  }
}

// -----

// OpenMP is refused whatever the option.
// ERR: check-gpu-mapped.mlir:[[# @LINE + 3]]:3: error: the GPU backend does not run OpenMP ops (omp.parallel)
func.func @openmp() {
  // expected-error@+1 {{the GPU backend does not run OpenMP ops (omp.parallel)}}
  omp.parallel {
    omp.terminator
  }
  return
}
