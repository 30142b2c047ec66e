// RUN: %mlax-opt --mlax-lower-control-flow %s | FileCheck %s

// Two branches: the tensor<i1> selector is extracted and picks [false, true] with scf.if; the
// branch functions are called in the regions, and the declaration is erased.
// CHECK-LABEL: func.func @test_cond
// CHECK-NEXT:    %[[P:.*]] = tensor.extract %arg0[] : tensor<i1>
// CHECK-NEXT:    %[[R:.*]]:2 = scf.if %[[P]] -> (tensor<3xf32>, tensor<i32>) {
// CHECK-NEXT:      %[[T:.*]]:2 = func.call @on_true(%arg1, %arg2, %arg3)
// CHECK-NEXT:      scf.yield %[[T]]#0, %[[T]]#1 : tensor<3xf32>, tensor<i32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[F:.*]]:2 = func.call @on_false(%arg1, %arg2, %arg3)
// CHECK-NEXT:      scf.yield %[[F]]#0, %[[F]]#1 : tensor<3xf32>, tensor<i32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]#0, %[[R]]#1
// CHECK-NOT:   mlax.cond
// CHECK:       func.func private @on_false
// CHECK:       func.func private @on_true
func.func @test_cond(%p: tensor<i1>, %x: tensor<3xf32>, %n: tensor<i32>, %w: tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>) {
  %0:2 = func.call @cond(%p, %x, %n, %w) : (tensor<i1>, tensor<3xf32>, tensor<i32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<i32>
}
func.func private @cond(tensor<i1>, tensor<3xf32>, tensor<i32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>) attributes {mlax.cond = {branches = [@on_false, @on_true]}}
func.func private @on_false(%x: tensor<3xf32>, %n: tensor<i32>, %w: tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>) {
  %0 = "mlax.sub"(%x, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %n : tensor<3xf32>, tensor<i32>
}
func.func private @on_true(%x: tensor<3xf32>, %n: tensor<i32>, %w: tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>) {
  %0 = "mlax.mul"(%x, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "mlax.neg"(%n) : (tensor<i32>) -> tensor<i32>
  return %0, %1 : tensor<3xf32>, tensor<i32>
}

// N branches: a chain of scf.if on `index <= k` (k = 0 .. N-2), the last branch in the
// innermost else; out-of-range indices fall to the first or the last branch (a clamp).
// Not scf.index_switch: one-shot bufferization mis-handles buffers yielded by its cases.
// CHECK-LABEL: func.func @test_switch
// CHECK-NEXT:    %[[I:.*]] = tensor.extract %arg0[] : tensor<i32>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[LE0:.*]] = arith.cmpi sle, %[[I]], %[[ZERO]] : i32
// CHECK-NEXT:    %[[R:.*]] = scf.if %[[LE0]] -> (tensor<2xi32>) {
// CHECK-NEXT:      %[[A:.*]] = func.call @first(%arg1)
// CHECK-NEXT:      scf.yield %[[A]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT:      %[[LE1:.*]] = arith.cmpi sle, %[[I]], %[[ONE]] : i32
// CHECK-NEXT:      %[[S:.*]] = scf.if %[[LE1]] -> (tensor<2xi32>) {
// CHECK-NEXT:        %[[B:.*]] = func.call @second(%arg1)
// CHECK-NEXT:        scf.yield %[[B]]
// CHECK-NEXT:      } else {
// CHECK-NEXT:        %[[D:.*]] = func.call @third(%arg1)
// CHECK-NEXT:        scf.yield %[[D]]
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.yield %[[S]]
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]
func.func @test_switch(%i: tensor<i32>, %x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = func.call @switch(%i, %x) : (tensor<i32>, tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}
func.func private @switch(tensor<i32>, tensor<2xi32>) -> tensor<2xi32> attributes {mlax.cond = {branches = [@first, @second, @third]}}
func.func private @first(%x: tensor<2xi32>) -> tensor<2xi32> {
  return %x : tensor<2xi32>
}
func.func private @second(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "mlax.add"(%x, %x) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}
func.func private @third(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "mlax.neg"(%x) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// One branch: whatever the selector, the branch is called.
// CHECK-LABEL: func.func @test_one_branch
// CHECK-NEXT:    %[[R:.*]] = call @only(%arg1) : (tensor<f32>) -> tensor<f32>
// CHECK-NEXT:    return %[[R]]
func.func @test_one_branch(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %0 = func.call @one(%i, %x) : (tensor<i32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @one(tensor<i32>, tensor<f32>) -> tensor<f32> attributes {mlax.cond = {branches = [@only]}}
func.func private @only(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
