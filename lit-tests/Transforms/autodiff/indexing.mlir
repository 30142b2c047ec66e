// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s

// The transpose of a gather adds the cotangent windows into zeros at the same indices: a
// scatter_add with the gather's numbers and mode.
// CHECK-LABEL: func.func private @f_vjp
// CHECK-SAME:    (%[[X:.*]]: tensor<5x4xf32>, %[[I:.*]]: tensor<3x1xi32>, %[[C:.*]]: tensor<3x4xf32>)
// CHECK:         %[[Y:.*]] = "mlax.gather"(%[[X]], %[[I]])
// CHECK:         %[[Z:.*]] = "mlax.broadcast_in_dim"(%{{.*}}) {broadcast_dimensions = array<i64>, shape = array<i64: 5, 4>}
// CHECK:         %[[G:.*]] = "mlax.scatter_add"(%[[Z]], %[[I]], %[[C]]) {index_vector_dim = 1 : i64, input_batching_dims = array<i64>, inserted_window_dims = array<i64: 0>, mode = "promise_in_bounds", scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}
// CHECK:         return %[[Y]], %[[G]]
func.func @f(%x: tensor<5x4xf32>, %i: tensor<3x1xi32>) -> tensor<3x4xf32> {
  %0 = "mlax.gather"(%x, %i) {offset_dims = array<i64: 1>, collapsed_slice_dims = array<i64: 0>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1, 4>, mode = "promise_in_bounds"} : (tensor<5x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
func.func private @f_vjp(tensor<5x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<5x4xf32>) attributes {mlax.vjp = {callee = @f, argnums = array<i64: 0>}}

// scatter (set) is linear in operand and updates: its JVP scatters the tangents. Its
// transpose zeroes the overwritten cotangent elements (a scatter of zeros) and gives each
// update the cotangent of its element only where its write stayed (updates numbered by an
// iota are scattered and read back).
// CHECK-LABEL: func.func private @g_jvp
// CHECK-SAME:    (%[[X:.*]]: tensor<5xf32>, %[[I:.*]]: tensor<2x1xi32>, %[[U:.*]]: tensor<2xf32>, %[[TX:.*]]: tensor<5xf32>, %{{.*}}: tensor<2x1xi32>, %[[TU:.*]]: tensor<2xf32>)
// CHECK:         %[[Y:.*]] = "mlax.scatter"(%[[X]], %[[I]], %[[U]])
// CHECK:         %[[T:.*]] = "mlax.scatter"(%[[TX]], %[[I]], %[[TU]])
// CHECK:         return %[[Y]], %[[T]]
// CHECK-LABEL: func.func private @g_vjp
// CHECK-SAME:    (%{{.*}}: tensor<5xf32>, %[[I:.*]]: tensor<2x1xi32>, %{{.*}}: tensor<2xf32>, %[[C:.*]]: tensor<5xf32>)
// CHECK:         %[[Z:.*]] = "mlax.broadcast_in_dim"
// CHECK:         %[[CX:.*]] = "mlax.scatter"(%[[C]], %[[I]], %[[Z]])
// CHECK:         %[[N:.*]] = "mlax.iota"() {dimension = 0 : i64, dtype = i32, shape = array<i64: 2>}
// CHECK:         %[[NONE:.*]] = "mlax.constant"() {value = dense<-1> : tensor<i32>}
// CHECK:         %[[UNWRITTEN:.*]] = "mlax.broadcast_in_dim"(%[[NONE]])
// CHECK:         %[[LAST:.*]] = "mlax.scatter"(%[[UNWRITTEN]], %[[I]], %[[N]]) {{.*}} : (tensor<5xi32>, tensor<2x1xi32>, tensor<2xi32>) -> tensor<5xi32>
// CHECK:         %[[BACK:.*]] = "mlax.gather"(%[[LAST]], %[[I]])
// CHECK:         %[[STAYED:.*]] = "mlax.compare"(%[[BACK]], %[[N]]) {comparison_direction = "EQ"}
// CHECK:         %[[READ:.*]] = "mlax.gather"(%[[C]], %[[I]])
// CHECK:         %[[CU:.*]] = "mlax.select"(%[[STAYED]], %[[READ]], %{{.*}})
// CHECK:         return %{{.*}}, %[[CX]], %[[CU]]
func.func @g(%x: tensor<5xf32>, %i: tensor<2x1xi32>, %u: tensor<2xf32>) -> tensor<5xf32> {
  %0 = "mlax.scatter"(%x, %i, %u) {update_window_dims = array<i64>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "fill"} : (tensor<5xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
func.func private @g_jvp(tensor<5xf32>, tensor<2x1xi32>, tensor<2xf32>, tensor<5xf32>, tensor<2x1xi32>, tensor<2xf32>) -> (tensor<5xf32>, tensor<5xf32>) attributes {mlax.jvp = {callee = @g}}
func.func private @g_vjp(tensor<5xf32>, tensor<2x1xi32>, tensor<2xf32>, tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>, tensor<2xf32>) attributes {mlax.vjp = {callee = @g, argnums = array<i64: 0, 2>}}

// scatter_add: the operand's cotangent passes through; the updates' is a gather of it, with
// the windows mode "fill" dropped reading zero (a select on where an int8 probe fitted).
// CHECK-LABEL: func.func private @h_vjp
// CHECK-SAME:    (%{{.*}}: tensor<5xf32>, %[[I:.*]]: tensor<2x1xi32>, %{{.*}}: tensor<2xf32>, %[[C:.*]]: tensor<5xf32>)
// CHECK:         %[[READ:.*]] = "mlax.gather"(%[[C]], %[[I]]) {{.*}}mode = "clip"
// CHECK:         %[[PROBE:.*]] = "mlax.gather"(%{{.*}}, %[[I]]) {{.*}}mode = "fill"{{.*}} : (tensor<5xi8>, tensor<2x1xi32>) -> tensor<2xi8>
// CHECK:         %[[FITS:.*]] = "mlax.compare"(%[[PROBE]], %{{.*}}) {comparison_direction = "EQ"}
// CHECK:         %[[CU:.*]] = "mlax.select"(%[[FITS]], %[[READ]], %{{.*}})
// CHECK:         return %{{.*}}, %[[C]], %[[CU]]
func.func @h(%x: tensor<5xf32>, %i: tensor<2x1xi32>, %u: tensor<2xf32>) -> tensor<5xf32> {
  %0 = "mlax.scatter_add"(%x, %i, %u) {update_window_dims = array<i64>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64, mode = "fill"} : (tensor<5xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
func.func private @h_vjp(tensor<5xf32>, tensor<2x1xi32>, tensor<2xf32>, tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>, tensor<2xf32>) attributes {mlax.vjp = {callee = @h, argnums = array<i64: 0, 2>}}
