// RUN: %mlax-opt --mlax-autodiff %s | FileCheck %s
// RUN: %mlax-opt --mlax-expand-transforms %s | %mlax-run --entry g_vjp --precision 5 --input '[1, 2, 3, 4]' --input '[1, 1j, 1+1j]' | FileCheck %s --check-prefix=RFFT
// RUN: %mlax-opt --mlax-expand-transforms %s | %mlax-run --entry h_vjp --precision 5 --input '[1+2j, 0.5, -1j]' --input '[1, -1, 2, 0, 3]' | FileCheck %s --check-prefix=IRFFT

// fft is linear: its tangent is the same transform of the operand's tangent.
// CHECK-LABEL: func.func private @f_jvp
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x4xcomplex<f32>>, %[[T:[a-zA-Z0-9_]+]]: tensor<2x4xcomplex<f32>>)
// CHECK:         %[[Y:.*]] = "mlax.fft"(%[[X]]) {fft_lengths = array<i64: 4>, fft_type = "IFFT"}
// CHECK:         %[[DY:.*]] = "mlax.fft"(%[[T]]) {fft_lengths = array<i64: 4>, fft_type = "IFFT"}
// CHECK:         return %[[Y]], %[[DY]]
func.func @f(%x: tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>> {
  %0 = "mlax.fft"(%x) {fft_lengths = array<i64: 4>, fft_type = "IFFT"} : (tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
  return %0 : tensor<2x4xcomplex<f32>>
}
func.func private @f_jvp(tensor<2x4xcomplex<f32>>, tensor<2x4xcomplex<f32>>) -> (tensor<2x4xcomplex<f32>>, tensor<2x4xcomplex<f32>>) attributes {mlax.jvp = {callee = @f}}

// RFFT's transpose (jax's _rfft_transpose): N * IRFFT(conj(ct) / mask), the mask 1 at the
// frequencies 0 and n/2 and 2 between them (here as the factors 1, 1/2, 1).
// CHECK-LABEL: func.func private @g_vjp
// CHECK-SAME:    (%{{[a-zA-Z0-9_]+}}: tensor<4xf32>, %[[CT:[a-zA-Z0-9_]+]]: tensor<3xcomplex<f32>>)
// CHECK:         %[[C:.*]] = "mlax.conj"(%[[CT]])
// CHECK:         %[[MASK:.*]] = "mlax.constant"() {value = dense<[(1.000000e+00,0.000000e+00), (5.000000e-01,0.000000e+00), (1.000000e+00,0.000000e+00)]> : tensor<3xcomplex<f32>>}
// CHECK:         %[[M:.*]] = "mlax.mul"(%[[C]], %[[MASK]])
// CHECK:         %[[I:.*]] = "mlax.fft"(%[[M]]) {fft_lengths = array<i64: 4>, fft_type = "IRFFT"}
// CHECK:         %[[N:.*]] = "mlax.broadcast_in_dim"
// CHECK:         %[[R:.*]] = "mlax.mul"(%[[I]], %[[N]])
// CHECK:         return %{{.*}}, %[[R]]
func.func @g(%x: tensor<4xf32>) -> tensor<3xcomplex<f32>> {
  %0 = "mlax.fft"(%x) {fft_lengths = array<i64: 4>, fft_type = "RFFT"} : (tensor<4xf32>) -> tensor<3xcomplex<f32>>
  return %0 : tensor<3xcomplex<f32>>
}
func.func private @g_vjp(tensor<4xf32>, tensor<3xcomplex<f32>>) -> (tensor<3xcomplex<f32>>, tensor<4xf32>) attributes {mlax.vjp = {callee = @g, argnums = array<i64: 0>}}
// jax.vjp(lambda v: jax.lax.fft(v, 'RFFT', (4,)), x)[1](ct)
// RFFT: result[1]: tensor<4xf32> = [2, 1, 2, -1]

// IRFFT's transpose (jax's _irfft_transpose): conj(mask * RFFT(ct) / N), odd n = 5: only the
// zero frequency is unpaired.
// CHECK-LABEL: func.func private @h_vjp
// CHECK-SAME:    (%{{[a-zA-Z0-9_]+}}: tensor<3xcomplex<f32>>, %[[CT:[a-zA-Z0-9_]+]]: tensor<5xf32>)
// CHECK:         %[[S:.*]] = "mlax.fft"(%[[CT]]) {fft_lengths = array<i64: 5>, fft_type = "RFFT"}
// CHECK:         %[[MASK:.*]] = "mlax.constant"() {value = dense<[(2.000000e-01,0.000000e+00), (4.000000e-01,0.000000e+00), (4.000000e-01,0.000000e+00)]> : tensor<3xcomplex<f32>>}
// CHECK:         %[[M:.*]] = "mlax.mul"(%[[S]], %[[MASK]])
// CHECK:         %[[R:.*]] = "mlax.conj"(%[[M]])
// CHECK:         return %{{.*}}, %[[R]]
func.func @h(%x: tensor<3xcomplex<f32>>) -> tensor<5xf32> {
  %0 = "mlax.fft"(%x) {fft_lengths = array<i64: 5>, fft_type = "IRFFT"} : (tensor<3xcomplex<f32>>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
func.func private @h_vjp(tensor<3xcomplex<f32>>, tensor<5xf32>) -> (tensor<5xf32>, tensor<3xcomplex<f32>>) attributes {mlax.vjp = {callee = @h, argnums = array<i64: 0>}}
// IRFFT: result[1]: tensor<3xcomplex<f32>> = [(1, -0), (0, -1.0515), (0, -1.7013)]
