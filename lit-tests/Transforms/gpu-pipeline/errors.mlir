// RUN: %mlax-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mlax-gpu-pipeline{libdevice=none})'
// RUN: not %mlax-opt %s --split-input-file --pass-pipeline='builtin.module(mlax-gpu-pipeline{to=buffers})' 2>&1 | FileCheck %s --check-prefix=BUFFERS

// What the GPU backend cannot run fails at the op that needs it, naming the op and the
// backends that run it. Library calls are refused at the end of the buffers stage, before any
// GPU lowering (the second run stops there; the other programs lower that far).
// BUFFERS: errors.mlir:[[# @LINE + 7]]:10: error: the GPU backend cannot call the library function @mlax_sgetrf
// BUFFERS: errors.mlir:[[# @LINE + 15]]:3: error: the GPU backend cannot call the library function @mlax_host_callback
// BUFFERS-NOT: reads device memory
// BUFFERS-NOT: libdevice

func.func @lu(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{the GPU backend cannot call the library function @mlax_sgetrf (func.call): use backend="cpu" or backend="xla" for this program}}
  %0:3 = "mlax.lu"(%x) : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xi32>, tensor<4xi32>)
  return %0#0 : tensor<4x4xf32>
}

// -----

func.func private @show(tensor<4xf32>) attributes {mlax.callback = {id = 0 : i64, kind = "debug", ordered = false, name = "show"}}
func.func @callback(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{the GPU backend cannot call the library function @mlax_host_callback (func.call)}}
  func.call @show(%x) : (tensor<4xf32>) -> ()
  return %x : tensor<4xf32>
}

// -----

// A floating-point remainder needs libdevice's fmod.
func.func @rem(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{arith.remf (a floating-point remainder) needs CUDA's libdevice (fmod), which this build does not link}}
  %0 = "mlax.rem"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// So does a math function without a polynomial of mlax's (found after the NVVM lowering) where
// libdevice is not linked (libdevice=none; by default the nvidia-cuda-nvcc-cu12 wheel's is).
func.func @cbrt(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error@+1 {{llvm.call @__nv_cbrt needs CUDA's libdevice, which is not installed (pip install 'mlax[gpu]': the nvidia-cuda-nvcc-cu12 wheel)}}
  %0 = "mlax.cbrt"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}
