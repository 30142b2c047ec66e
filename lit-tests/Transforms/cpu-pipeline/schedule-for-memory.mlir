// RUN: %mlax-opt --mlax-schedule-for-memory %s | FileCheck %s

// A training step's shape: every gradient, then every update. Each update is the only user of
// its gradient, so it moves up to just after it and the gradients are never alive together.
// CHECK-LABEL: func.func @test_updates_follow_gradients
// CHECK:         %[[G1:.*]] = linalg.exp ins(%arg0
// CHECK-NEXT:    linalg.sub ins(%arg0, %[[G1]]
// CHECK-NEXT:    %[[G2:.*]] = linalg.exp ins(%arg1
// CHECK-NEXT:    linalg.sub ins(%arg1, %[[G2]]
// CHECK-NEXT:    return
func.func @test_updates_follow_gradients(%w1: tensor<4x4xf32>, %w2: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %g1 = linalg.exp ins(%w1 : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %g2 = linalg.exp ins(%w2 : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %u1 = linalg.sub ins(%w1, %g1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %u2 = linalg.sub ins(%w2, %g2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %u1, %u2 : tensor<4x4xf32>, tensor<4x4xf32>
}

// A chain moves link by link: the scaling of g right after g, the update right after it.
// CHECK-LABEL: func.func @test_chain
// CHECK:         %[[G:.*]] = linalg.exp ins(%arg0
// CHECK-NEXT:    %[[S:.*]] = linalg.mul ins(%[[G]], %arg2
// CHECK-NEXT:    linalg.sub ins(%arg0, %[[S]]
// CHECK-NEXT:    linalg.exp ins(%arg1
func.func @test_chain(%w: tensor<8xf32>, %v: tensor<8xf32>, %lr: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %g = linalg.exp ins(%w : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %other = linalg.exp ins(%v : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.mul ins(%g, %lr : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %u = linalg.sub ins(%w, %s : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %u, %other : tensor<8xf32>, tensor<8xf32>
}

// Nothing moves where it would not shorten a life: an op that starts a larger temporary than
// it frees (the broadcast of %a; the add that frees the broadcast does move), an op that is not the last user of its operand (the negf of
// %b, returned too), and a call (not known to be pure), although it is the last user of %c.
// CHECK-LABEL: func.func @test_no_move
// CHECK:         %[[A:.*]] = linalg.exp ins(%arg0
// CHECK-NEXT:    %[[B:.*]] = linalg.exp ins(%arg1
// CHECK-NEXT:    %[[C:.*]] = linalg.exp ins(%arg2
// CHECK-NEXT:    linalg.negf ins(%arg0
// CHECK-NEXT:    linalg.broadcast ins(%[[A]]
// CHECK-NEXT:    linalg.add
// CHECK-NEXT:    linalg.negf ins(%[[B]]
// CHECK-NEXT:    call @effect(%[[C]])
func.func private @effect(tensor<4xf32>) -> tensor<4xf32>
func.func @test_no_move(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.exp ins(%y : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %c = linalg.exp ins(%z : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.negf ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %big = linalg.broadcast ins(%a : tensor<4xf32>) outs(%e2 : tensor<4x4xf32>) dimensions = [1]
  %n = linalg.negf ins(%b : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = func.call @effect(%c) : (tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.add ins(%big, %big : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %sum, %n, %r, %b, %m : tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
