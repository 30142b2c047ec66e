// RUN: not %mlax-run %s --entry main --random-inputs 0 --backend interpreter 2>&1 | FileCheck %s
// RUN: not %mlax-run %s --entry main --random-inputs 0 --backend cpu 2>&1 | FileCheck %s

// A module read from text names callback ids this process never registered: a clear error.
// CHECK: mlax-run: error: running @main failed: CallbackError: mlax.callback declaration @show: no host callback with id 123456 is registered in this process
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  func.call @show(%x) : (tensor<3xf32>) -> ()
  return %x : tensor<3xf32>
}
func.func private @show(tensor<3xf32>) attributes {mlax.callback = {id = 123456 : i64, kind = "debug", ordered = false, name = "show"}}
