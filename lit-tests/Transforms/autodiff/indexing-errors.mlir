// RUN: %mlax-opt %s --mlax-autodiff --split-input-file --verify-diagnostics

// scatter_mul has no derivative with respect to its updates (JAX has one only for unique
// indices).
func.func @f(%x: tensor<5xf32>, %i: tensor<2x1xi32>, %u: tensor<2xf32>) -> tensor<5xf32> {
  // expected-error@+1 {{the derivative of mlax.scatter_mul with respect to its updates is not supported}}
  %0 = "mlax.scatter_mul"(%x, %i, %u) {update_window_dims = array<i64>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "fill"} : (tensor<5xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
func.func private @f_vjp(tensor<5xf32>, tensor<2x1xi32>, tensor<2xf32>, tensor<5xf32>) -> (tensor<5xf32>, tensor<2xf32>) attributes {mlax.vjp = {callee = @f, argnums = array<i64: 2>}}
