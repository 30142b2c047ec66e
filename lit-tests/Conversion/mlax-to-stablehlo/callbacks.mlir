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

// io callbacks have side effects (kept when unused); ordered ones join the debug callbacks'
// token chain, in program order, unordered ones do not.
// CHECK-LABEL: func.func @test_io_callbacks
// CHECK:         %[[A:.*]]:2 = "stablehlo.custom_call"(%{{.*}}, %arg0) {{.*}}has_side_effect = true} : (tensor<{{.*}}xi64>, tensor<3xf32>) -> (tensor<3xf32>, tensor<i8>)
// CHECK:         %[[U:.*]] = "stablehlo.custom_call"(%{{.*}}, %arg0) {{.*}}has_side_effect = true} : (tensor<{{.*}}xi64>, tensor<3xf32>) -> tensor<3xf32>
// CHECK:         "stablehlo.custom_call"(%{{.*}}, %[[A]]#0, %[[A]]#1) {{.*}}has_side_effect = true} : (tensor<{{.*}}xi64>, tensor<3xf32>, tensor<i8>) -> (tensor<3xf32>, tensor<i8>)
// CHECK:         return %[[A]]#0
func.func @test_io_callbacks(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @log(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = func.call @read(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = func.call @log(%0) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @log(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.callback = {id = 0 : i64, kind = "io", ordered = true, name = "log"}}
func.func private @read(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.callback = {id = 1 : i64, kind = "io", ordered = false, name = "read"}}

// Ordered callbacks keep program order through control flow and calls (XLA orders only by
// data): the body of a scan holding one takes the token as a const (its first callback takes
// it), a function only called returns its last token, and the callback after the scan takes a
// token joined with the scan's results (t + r * 0.0, which XLA cannot fold).
// CHECK-LABEL: func.func @test_ordered_through_scan
// CHECK:         %[[A:.*]]:2 = "stablehlo.custom_call"(%{{.*}}, %arg0) {{.*}}has_side_effect = true} : (tensor<{{.*}}xi64>, tensor<f32>) -> (tensor<f32>, tensor<i8>)
// CHECK:         %[[L:.*]]:3 = "stablehlo.while"
// CHECK:           func.call @step(%{{.*}}, %{{.*}}, %[[A]]#1) : (tensor<f32>, tensor<f32>, tensor<i8>) -> (tensor<f32>, tensor<f32>)
// CHECK:         "stablehlo.multiply"
// CHECK:         %[[J:.*]] = "stablehlo.convert"(%{{.*}}) : (tensor<f32>) -> tensor<i8>
// CHECK:         %[[H:.*]]:2 = call @helper(%{{.*}}, %[[J]]) : (tensor<f32>, tensor<i8>) -> (tensor<f32>, tensor<i8>)
// CHECK:         "stablehlo.custom_call"(%{{.*}}, %[[H]]#0, %[[H]]#1) {{.*}}has_side_effect = true}
// CHECK-LABEL: func.func private @step
// CHECK-SAME:    %arg2: tensor<i8>
// CHECK:         "stablehlo.custom_call"(%{{.*}}, %{{.*}}, %arg2)
// CHECK-LABEL: func.func private @helper
// CHECK-SAME:    -> (tensor<f32>, tensor<i8>)
// CHECK:         %[[T:.*]]:2 = "stablehlo.custom_call"(%{{.*}}, %arg0, %arg1)
// CHECK:         return %[[T]]#0, %[[T]]#1
func.func @test_ordered_through_scan(%x: tensor<f32>, %xs: tensor<2xf32>) -> tensor<f32> {
  %0 = func.call @note(%x) : (tensor<f32>) -> tensor<f32>
  %1:2 = func.call @loop(%0, %xs) : (tensor<f32>, tensor<2xf32>) -> (tensor<f32>, tensor<2xf32>)
  %2 = func.call @helper(%1#0) : (tensor<f32>) -> tensor<f32>
  %3 = func.call @note(%2) : (tensor<f32>) -> tensor<f32>
  return %3 : tensor<f32>
}
func.func private @step(%c: tensor<f32>, %x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0 = func.call @note(%c) : (tensor<f32>) -> tensor<f32>
  %1 = "mlax.add"(%0, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %1, %c : tensor<f32>, tensor<f32>
}
func.func private @helper(%x: tensor<f32>) -> tensor<f32> {
  %0 = func.call @note(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @loop(tensor<f32>, tensor<2xf32>) -> (tensor<f32>, tensor<2xf32>) attributes {mlax.scan = {body = @step, length = 2 : i64, num_carry = 1 : i64, num_consts = 0 : i64, reverse = false}}
func.func private @note(tensor<f32>) -> tensor<f32> attributes {mlax.callback = {id = 3 : i64, kind = "io", ordered = true, name = "note"}}
