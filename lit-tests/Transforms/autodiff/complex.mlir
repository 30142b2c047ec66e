// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s

// JAX's rules: complex/real/imag/conj are linear (the same op on the tangents); reverse mode
// transposes real to complex(ct, 0) and imag to complex(0, -ct); abs of a complex number has
// the tangent real(t * conj(x) / |x|).

// CHECK-LABEL: func.func private @f_jvp
// CHECK-SAME:    (%[[X:.*]]: tensor<3xcomplex<f32>>, %[[T:.*]]: tensor<3xcomplex<f32>>)
// CHECK-DAG:     "mlax.conj"(%[[X]])
// CHECK-DAG:     %[[M:.*]] = "mlax.mul"(%[[T]], %{{.*}})
// CHECK:         "mlax.real"(%[[M]]) : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
// CHECK:         "mlax.imag"(%[[T]]) : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
func.func @f(%x: tensor<3xcomplex<f32>>) -> tensor<3xf32> {
  %0 = "mlax.abs"(%x) : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
  %1 = "mlax.imag"(%x) : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
  %2 = "mlax.add"(%0, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %2 : tensor<3xf32>
}
func.func @test_jvp(%x: tensor<3xcomplex<f32>>, %t: tensor<3xcomplex<f32>>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:2 = func.call @f_jvp(%x, %t) : (tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}
func.func private @f_jvp(tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.jvp = {callee = @f}}

// CHECK-LABEL: func.func private @g_vjp
// CHECK-SAME:    (%{{.*}}: tensor<3xcomplex<f32>>, %[[CT:.*]]: tensor<3xf32>)
// CHECK:         %[[NEG:.*]] = "mlax.neg"(%[[CT]])
// CHECK:         "mlax.complex"(%{{.*}}, %[[NEG]]) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xcomplex<f32>>
func.func @g(%x: tensor<3xcomplex<f32>>) -> tensor<3xf32> {
  %0 = "mlax.imag"(%x) : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @test_vjp(%x: tensor<3xcomplex<f32>>, %ct: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xcomplex<f32>>) {
  %0:2 = func.call @g_vjp(%x, %ct) : (tensor<3xcomplex<f32>>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xcomplex<f32>>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xcomplex<f32>>
}
func.func private @g_vjp(tensor<3xcomplex<f32>>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xcomplex<f32>>) attributes {mlax.vjp = {callee = @g, argnums = array<i64: 0>}}
