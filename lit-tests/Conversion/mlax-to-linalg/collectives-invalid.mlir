// RUN: %mlax-opt %s --split-input-file --verify-diagnostics --mlax-lower-to-linalg

// The one-device CPU road has no devices to communicate with: the error names the xla backend.
func.func @psum(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{mlax-lower-to-linalg: mlax.psum communicates between devices, which the one-device CPU backend does not have: run sharded programs on the xla backend}}
  %0 = "mlax.psum"(%a) {axes = ["x"]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @axis_index() -> tensor<i32> {
  // expected-error@+1 {{mlax.axis_index communicates between devices}}
  %0 = "mlax.axis_index"() {axes = ["x"], axis_size = 2 : i64} : () -> tensor<i32>
  return %0 : tensor<i32>
}
