// RUN: %mlax-opt --mlax-cleanup %s | FileCheck %s

// DCE: every mlax op is pure, so one whose results are unused is erased.

// A dead chain goes in one run, users first.
// CHECK-LABEL: func.func @test_dce_unused_chain
// CHECK-NEXT:    return %arg0
func.func @test_dce_unused_chain(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "mlax.tanh"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "mlax.mul"(%1, %0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %x : tensor<3xf32>
}

// Unchanged: the result is returned.
// CHECK-LABEL: func.func @test_no_dce_used
// CHECK:         "mlax.exp"
func.func @test_no_dce_used(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// A call of a function without effects (it holds only mlax ops) goes when its result is
// unused; one of a declaration not yet expanded (the jvp below) stays: its body is not known.
// CHECK-LABEL: func.func @test_dce_call
// CHECK-NEXT:    call @test_no_dce_declaration
// CHECK-NEXT:    return %arg0
func.func @test_dce_call(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @test_no_dce_used(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1:2 = func.call @test_no_dce_declaration(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %x : tensor<3xf32>
}

// Unchanged: declarations of transformations are left for mlax-autodiff / mlax-batch.
// CHECK-LABEL: func.func private @test_no_dce_declaration
// CHECK-SAME:    mlax.jvp = {callee = @test_no_dce_used}
func.func private @test_no_dce_declaration(tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {mlax.jvp = {callee = @test_no_dce_used}}
