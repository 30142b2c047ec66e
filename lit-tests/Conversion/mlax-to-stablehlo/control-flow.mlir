// RUN: %mlax-opt %s --allow-unregistered-dialect --mlax-lower-to-stablehlo | FileCheck %s

// cond with an i1 selector: stablehlo.case on its i32 conversion (false is branch 0); each
// branch region calls its branch function and returns the results. The branch functions stay
// (XLA reads func.call) and their mlax ops are lowered; the declaration is erased.
// CHECK-LABEL: func.func @test_cond
// CHECK-NEXT:    %[[I:.*]] = "stablehlo.convert"(%arg0) : (tensor<i1>) -> tensor<i32>
// CHECK-NEXT:    %[[R:.*]] = "stablehlo.case"(%[[I]]) ({
// CHECK-NEXT:      %[[A:.*]] = func.call @no(%arg1) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:      "stablehlo.return"(%[[A]]) : (tensor<3xf32>) -> ()
// CHECK-NEXT:    }, {
// CHECK-NEXT:      %[[B:.*]] = func.call @yes(%arg1) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:      "stablehlo.return"(%[[B]]) : (tensor<3xf32>) -> ()
// CHECK-NEXT:    }) : (tensor<i32>) -> tensor<3xf32>
// CHECK-NEXT:    return %[[R]]
// CHECK-NOT:   func.func private @cond
// CHECK-LABEL: func.func private @no
// CHECK-NEXT:    "stablehlo.negate"(%arg0)
func.func @test_cond(%p: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @cond(%p, %x) : (tensor<i1>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @cond(tensor<i1>, tensor<3xf32>) -> tensor<3xf32> attributes {mlax.cond = {branches = [@no, @yes]}}
func.func private @no(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @yes(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}

// An i32 selector is clamped into [0, N-1] first (stablehlo.case would run the last branch
// for a negative index; lax.switch and the interpreter run the first).
// CHECK-LABEL: func.func @test_switch
// CHECK-NEXT:    %[[LO:.*]] = "stablehlo.constant"() {value = dense<0> : tensor<i32>}
// CHECK-NEXT:    %[[HI:.*]] = "stablehlo.constant"() {value = dense<2> : tensor<i32>}
// CHECK-NEXT:    %[[I:.*]] = "stablehlo.clamp"(%[[LO]], %arg0, %[[HI]])
// CHECK-NEXT:    "stablehlo.case"(%[[I]]) ({
// CHECK:           func.call @no
// CHECK:         }, {
// CHECK:           func.call @yes
// CHECK:         }, {
// CHECK:           func.call @no
// CHECK:         }) : (tensor<i32>) -> tensor<3xf32>
func.func @test_switch(%i: tensor<i32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @switch(%i, %x) : (tensor<i32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @switch(tensor<i32>, tensor<3xf32>) -> tensor<3xf32> attributes {mlax.cond = {branches = [@no, @yes, @no]}}

// while: stablehlo.while over the carries; the regions call the cond and body functions with
// the consts (%arg2) used from above.
// CHECK-LABEL: func.func @test_while
// CHECK-NEXT:    %[[W:.*]]:2 = "stablehlo.while"(%arg0, %arg1) ({
// CHECK-NEXT:    ^bb0(%[[N:.*]]: tensor<i32>, %[[X:.*]]: tensor<3xf32>):
// CHECK-NEXT:      %[[P:.*]] = func.call @positive(%[[N]], %[[X]], %arg2)
// CHECK-NEXT:      "stablehlo.return"(%[[P]]) : (tensor<i1>) -> ()
// CHECK-NEXT:    }, {
// CHECK-NEXT:    ^bb0(%[[N2:.*]]: tensor<i32>, %[[X2:.*]]: tensor<3xf32>):
// CHECK-NEXT:      %[[S:.*]]:2 = func.call @step(%[[N2]], %[[X2]], %arg2)
// CHECK-NEXT:      "stablehlo.return"(%[[S]]#0, %[[S]]#1)
// CHECK-NEXT:    }) : (tensor<i32>, tensor<3xf32>) -> (tensor<i32>, tensor<3xf32>)
// CHECK-NEXT:    return %[[W]]#0, %[[W]]#1
func.func @test_while(%n: tensor<i32>, %x: tensor<3xf32>, %w: tensor<3xf32>) -> (tensor<i32>, tensor<3xf32>) {
  %0:2 = func.call @loop(%n, %x, %w) : (tensor<i32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<i32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<i32>, tensor<3xf32>
}
func.func private @loop(tensor<i32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<i32>, tensor<3xf32>) attributes {mlax.while = {cond = @positive, body = @step}}
func.func private @positive(%n: tensor<i32>, %x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<i1> {
  %z = "mlax.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %0 = "mlax.compare"(%n, %z) {comparison_direction = "GT"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func private @step(%n: tensor<i32>, %x: tensor<3xf32>, %w: tensor<3xf32>) -> (tensor<i32>, tensor<3xf32>) {
  %one = "mlax.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %0 = "mlax.sub"(%n, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  %1 = "mlax.add"(%x, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<i32>, tensor<3xf32>
}

// scan (reverse): stablehlo.while over (step, carry, stacked ys from zeros); step i reads row
// 4 - i of the xs with dynamic_slice, calls the body, writes the y into that row with
// dynamic_update_slice; the xs and the const are used from above.
// CHECK-LABEL: func.func @test_scan
// CHECK-NEXT:    %[[YS_SCALAR:.*]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[YS:.*]] = "stablehlo.broadcast_in_dim"(%[[YS_SCALAR]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<5xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = "stablehlo.constant"() {value = dense<0> : tensor<i32>}
// CHECK-NEXT:    %[[L:.*]]:3 = "stablehlo.while"(%[[ZERO]], %arg0, %[[YS]]) ({
// CHECK-NEXT:    ^bb0(%[[I:.*]]: tensor<i32>, %{{.*}}: tensor<3xf32>, %{{.*}}: tensor<5xf32>):
// CHECK-NEXT:      %[[LEN:.*]] = "stablehlo.constant"() {value = dense<5> : tensor<i32>}
// CHECK-NEXT:      %[[MORE:.*]] = "stablehlo.compare"(%[[I]], %[[LEN]]) {{.*}}comparison_direction LT
// CHECK-NEXT:      "stablehlo.return"(%[[MORE]])
// CHECK-NEXT:    }, {
// CHECK-NEXT:    ^bb0(%[[J:.*]]: tensor<i32>, %[[H:.*]]: tensor<3xf32>, %[[STACK:.*]]: tensor<5xf32>):
// CHECK-NEXT:      %[[LAST:.*]] = "stablehlo.constant"() {value = dense<4> : tensor<i32>}
// CHECK-NEXT:      %[[ROW:.*]] = "stablehlo.subtract"(%[[LAST]], %[[J]])
// CHECK-NEXT:      %[[Z:.*]] = "stablehlo.constant"() {value = dense<0> : tensor<i32>}
// CHECK-NEXT:      %[[X1:.*]] = "stablehlo.dynamic_slice"(%arg1, %[[ROW]], %[[Z]]) {slice_sizes = array<i64: 1, 3>} : (tensor<5x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
// CHECK-NEXT:      %[[X:.*]] = "stablehlo.reshape"(%[[X1]]) : (tensor<1x3xf32>) -> tensor<3xf32>
// CHECK-NEXT:      %[[OUT:.*]]:2 = func.call @cell(%[[H]], %[[X]], %arg2)
// CHECK-NEXT:      %[[Y:.*]] = "stablehlo.reshape"(%[[OUT]]#1) : (tensor<f32>) -> tensor<1xf32>
// CHECK-NEXT:      %[[NEW:.*]] = "stablehlo.dynamic_update_slice"(%[[STACK]], %[[Y]], %[[ROW]])
// CHECK-NEXT:      %[[ONE:.*]] = "stablehlo.constant"() {value = dense<1> : tensor<i32>}
// CHECK-NEXT:      %[[NEXT:.*]] = "stablehlo.add"(%[[J]], %[[ONE]])
// CHECK-NEXT:      "stablehlo.return"(%[[NEXT]], %[[OUT]]#0, %[[NEW]])
// CHECK-NEXT:    })
// CHECK-NEXT:    return %[[L]]#1, %[[L]]#2
func.func @test_scan(%h: tensor<3xf32>, %xs: tensor<5x3xf32>, %w: tensor<3xf32>) -> (tensor<3xf32>, tensor<5xf32>) {
  %0:2 = func.call @scan(%h, %xs, %w) : (tensor<3xf32>, tensor<5x3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<5xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<5xf32>
}
func.func private @scan(tensor<3xf32>, tensor<5x3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<5xf32>) attributes {mlax.scan = {body = @cell, length = 5 : i64, reverse = true, num_carry = 1 : i64, num_consts = 1 : i64}}
func.func private @cell(%h: tensor<3xf32>, %x: tensor<3xf32>, %w: tensor<3xf32>) -> (tensor<3xf32>, tensor<f32>) {
  %0 = "mlax.mul"(%h, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "mlax.add"(%0, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = "mlax.reduce_sum"(%1) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %1, %2 : tensor<3xf32>, tensor<f32>
}

// A scan longer than i32 counts steps in i64 (only its carry: nothing is stacked).
// CHECK-LABEL: func.func @test_long_scan
// CHECK-NEXT:    %[[ZERO:.*]] = "stablehlo.constant"() {value = dense<0> : tensor<i64>}
// CHECK-NEXT:    %[[L:.*]]:2 = "stablehlo.while"(%[[ZERO]], %arg0)
// CHECK-NEXT:    ^bb0(%[[I:.*]]: tensor<i64>, %{{.*}}: tensor<f32>):
// CHECK-NEXT:      %[[LEN:.*]] = "stablehlo.constant"() {value = dense<1099511627776> : tensor<i64>}
// CHECK:           "stablehlo.add"(%{{.*}}, %{{.*}}) : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK:         return %[[L]]#1
func.func @test_long_scan(%c: tensor<f32>) -> tensor<f32> {
  %0 = func.call @long_scan(%c) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @long_scan(tensor<f32>) -> tensor<f32> attributes {mlax.scan = {body = @square, length = 1099511627776 : i64, reverse = false, num_carry = 1 : i64, num_consts = 0 : i64}}
func.func private @square(%c: tensor<f32>) -> tensor<f32> {
  %0 = "mlax.mul"(%c, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// A branch that calls a declaration itself (a scan inside a cond): its call becomes a
// stablehlo.while in the branch function too.
// CHECK-LABEL: func.func @test_nested
// CHECK:         "stablehlo.case"
// CHECK:           func.call @run
// CHECK-LABEL: func.func private @run
// CHECK:         "stablehlo.while"
// CHECK:           func.call @cell
func.func @test_nested(%p: tensor<i1>, %h: tensor<3xf32>, %xs: tensor<5x3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @maybe_scan(%p, %h, %xs, %w) : (tensor<i1>, tensor<3xf32>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @maybe_scan(tensor<i1>, tensor<3xf32>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<3xf32> attributes {mlax.cond = {branches = [@skip, @run]}}
func.func private @skip(%h: tensor<3xf32>, %xs: tensor<5x3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  return %h : tensor<3xf32>
}
func.func private @run(%h: tensor<3xf32>, %xs: tensor<5x3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %0:2 = func.call @scan(%h, %xs, %w) : (tensor<3xf32>, tensor<5x3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<5xf32>)
  return %0#0 : tensor<3xf32>
}
