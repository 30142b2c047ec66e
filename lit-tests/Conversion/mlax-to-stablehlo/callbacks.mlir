// RUN: %mlax-opt %s --allow-unregistered-dialect --mlax-lower-to-stablehlo | FileCheck %s

// A callback call is a custom call of the runtime's target: operand 0 is the descriptor
// (id, counts, dtype code / rank / dims of each operand and result). Debug callbacks have side
// effects and are chained in program order by a tensor<i8> token; an unused pure one is dropped.
// CHECK-LABEL: func.func @test_callbacks
// CHECK:         %[[D0:.*]] = "stablehlo.constant"() {value = dense<[0, 2, 0, 10, 1, 3, 3, 0]> : tensor<8xi64>}
// CHECK:         %[[T0:.*]] = "stablehlo.custom_call"(%[[D0]], %arg0, %arg1) {api_version = 4 : i32, call_target_name = "mlax_host_callback", has_side_effect = true} : (tensor<8xi64>, tensor<3xf32>, tensor<i32>) -> tensor<i8>
// CHECK:         %[[D1:.*]] = "stablehlo.constant"() {value = dense<[1, 1, 1, 10, 1, 3, 10, 1, 3]> : tensor<9xi64>}
// CHECK:         %[[P:.*]] = "stablehlo.custom_call"(%[[D1]], %arg0) {api_version = 4 : i32, call_target_name = "mlax_host_callback", has_side_effect = false} : (tensor<9xi64>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NOT:     has_side_effect = false
// CHECK:         "stablehlo.custom_call"(%{{.*}}, %[[P]], %arg1, %[[T0]]) {{.*}}has_side_effect = true
// CHECK:         return %[[P]]
// CHECK-NOT:   mlax.callback
func.func @test_callbacks(%x: tensor<3xf32>, %n: tensor<i32>) -> tensor<3xf32> {
  func.call @show(%x, %n) : (tensor<3xf32>, tensor<i32>) -> ()
  %0 = func.call @twice(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = func.call @twice(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.call @show(%0, %n) : (tensor<3xf32>, tensor<i32>) -> ()
  return %0 : tensor<3xf32>
}
func.func private @show(tensor<3xf32>, tensor<i32>) attributes {mlax.callback = {id = 0 : i64, kind = "debug", ordered = true, name = "show"}}
func.func private @twice(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.callback = {id = 1 : i64, kind = "pure", ordered = false, name = "twice"}}
