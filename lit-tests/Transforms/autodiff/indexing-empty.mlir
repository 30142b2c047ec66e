// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s
// RUN: %mlax-opt --mlax-autodiff %s | %mlax-run --entry test_scatter_vjp --input '[]' --input '[[0], [3]]' --input '[1.5, 2.5]' --input '[]' | FileCheck %s --check-prefix=SCATTER
// RUN: %mlax-opt --mlax-autodiff %s | %mlax-run --entry test_scatter_add_vjp --input '[]' --input '[[0], [3]]' --input '[1.5, 2.5]' --input '[]' | FileCheck %s --check-prefix=SCATTER
// RUN: %mlax-opt --mlax-autodiff %s | %mlax-run --entry test_scatter_max_jvp --input '[]' --input '[[0], [3]]' --input '[1.5, 2.5]' --input '[]' --input '[[0], [3]]' --input '[1.0, 1.0]' | FileCheck %s --check-prefix=MAX

// Scatters into an operand with no element write nothing: every update's cotangent is
// zero, and no gather reads the windows back (a collapsed dimension of size 0 has no slice
// of size 1, so the usual rules would build an invalid gather).

// CHECK-LABEL: func.func private @test_scatter_vjp
// CHECK-NOT:     "mlax.gather"
// CHECK:         return {{.*}} : tensor<0xf32>, tensor<0xf32>, tensor<2xf32>
// SCATTER:      result[0]: tensor<0xf32> = []
// SCATTER-NEXT: result[1]: tensor<0xf32> = []
// SCATTER-NEXT: result[2]: tensor<2xf32> = [0.0, 0.0]
func.func @scatter(%x: tensor<0xf32>, %i: tensor<2x1xi32>, %u: tensor<2xf32>) -> tensor<0xf32> {
  %0 = "mlax.scatter"(%x, %i, %u) {update_window_dims = array<i64>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "fill"} : (tensor<0xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<0xf32>
  return %0 : tensor<0xf32>
}
func.func private @test_scatter_vjp(tensor<0xf32>, tensor<2x1xi32>, tensor<2xf32>, tensor<0xf32>) -> (tensor<0xf32>, tensor<0xf32>, tensor<2xf32>) attributes {mlax.vjp = {callee = @scatter, argnums = array<i64: 0, 2>}}

// CHECK-LABEL: func.func private @test_scatter_add_vjp
// CHECK-NOT:     "mlax.gather"
// CHECK:         return {{.*}} : tensor<0xf32>, tensor<0xf32>, tensor<2xf32>
func.func @scatter_add(%x: tensor<0xf32>, %i: tensor<2x1xi32>, %u: tensor<2xf32>) -> tensor<0xf32> {
  %0 = "mlax.scatter_add"(%x, %i, %u) {update_window_dims = array<i64>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "clip"} : (tensor<0xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<0xf32>
  return %0 : tensor<0xf32>
}
func.func private @test_scatter_add_vjp(tensor<0xf32>, tensor<2x1xi32>, tensor<2xf32>, tensor<0xf32>) -> (tensor<0xf32>, tensor<0xf32>, tensor<2xf32>) attributes {mlax.vjp = {callee = @scatter_add, argnums = array<i64: 0, 2>}}

// The JVP of scatter_max reads the winners back with a gather: none here, the tangent is empty.
// CHECK-LABEL: func.func private @test_scatter_max_jvp
// CHECK-NOT:     "mlax.gather"
// CHECK:         return %{{.*}}, %{{.*}} : tensor<0xf32>, tensor<0xf32>
// MAX:      result[0]: tensor<0xf32> = []
// MAX-NEXT: result[1]: tensor<0xf32> = []
func.func @scatter_max(%x: tensor<0xf32>, %i: tensor<2x1xi32>, %u: tensor<2xf32>) -> tensor<0xf32> {
  %0 = "mlax.scatter_max"(%x, %i, %u) {update_window_dims = array<i64>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "fill"} : (tensor<0xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<0xf32>
  return %0 : tensor<0xf32>
}
func.func private @test_scatter_max_jvp(tensor<0xf32>, tensor<2x1xi32>, tensor<2xf32>, tensor<0xf32>, tensor<2x1xi32>, tensor<2xf32>) -> (tensor<0xf32>, tensor<0xf32>) attributes {mlax.jvp = {callee = @scatter_max}}
