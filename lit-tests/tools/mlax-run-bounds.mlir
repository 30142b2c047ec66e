// RUN: not %mlax-run %s --entry test_constant 2>&1 | FileCheck %s --check-prefix=CONSTANT
// RUN: not %mlax-run %s --entry test_constant --backend cpu 2>&1 | FileCheck %s --check-prefix=CONSTANT
// RUN: not %mlax-run %s --entry test_iota 2>&1 | FileCheck %s --check-prefix=IOTA
// RUN: not %mlax-run %s --entry test_broadcast --input 1.0 2>&1 | FileCheck %s --check-prefix=BROADCAST
// RUN: not %mlax-run %s --entry test_scan_stack --input 1.0 2>&1 | FileCheck %s --check-prefix=SCAN
// RUN: not %mlax-run %s --entry test_argument --random-inputs 0 2>&1 | FileCheck %s --check-prefix=ARGUMENT

// Hand-written IR can name any static shape. A value that cannot fit in this process's memory
// is refused before anything is allocated (backends/memory_limits.py), at the op that makes
// it: the interpreter holds every value of the functions it runs, the CPU backend compiles
// the whole module (here the first such op is @test_constant's) and mallocs each buffer
// unchecked. tests/tools/test_bounded_inputs.py runs these under a memory cap.

// CONSTANT: mlax-run-bounds.mlir:[[@LINE+3]]:8: error: running @test_constant failed: the result of mlax.constant is tensor<1099511627776xf32> (4.0 TiB), more than this process can hold
// CONSTANT-NEXT: "mlax.constant"
func.func @test_constant() -> tensor<1099511627776xf32> {
  %0 = "mlax.constant"() {value = dense<1.0> : tensor<1099511627776xf32>} : () -> tensor<1099511627776xf32>
  return %0 : tensor<1099511627776xf32>
}

// IOTA: mlax-run-bounds.mlir:[[@LINE+2]]:8: error: running @test_iota failed: the result of mlax.iota is tensor<1099511627776xi32> (4.0 TiB)
func.func @test_iota() -> tensor<i32> {
  %0 = "mlax.iota"() {shape = array<i64: 1099511627776>, dtype = i32, dimension = 0 : i64} : () -> tensor<1099511627776xi32>
  %1 = "mlax.reduce_max"(%0) {dimensions = array<i64: 0>} : (tensor<1099511627776xi32>) -> tensor<i32>
  return %1 : tensor<i32>
}

// BROADCAST: mlax-run-bounds.mlir:[[@LINE+2]]:8: error: running @test_broadcast failed: the result of mlax.broadcast_in_dim is tensor<1099511627776x2xf32> (8.0 TiB)
func.func @test_broadcast(%x: tensor<f32>) -> tensor<f32> {
  %0 = "mlax.broadcast_in_dim"(%x) {shape = array<i64: 1099511627776, 2>, broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1099511627776x2xf32>
  %1 = "mlax.reduce_sum"(%0) {dimensions = array<i64: 0, 1>} : (tensor<1099511627776x2xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// A scan stacks its ys for the interpreter.
// SCAN: mlax-run-bounds.mlir:[[@LINE+2]]:10: error: running @test_scan_stack failed: result 1 of the call of @stack_scan is tensor<1099511627776xf32> (4.0 TiB)
func.func @test_scan_stack(%c: tensor<f32>) -> tensor<f32> {
  %0:2 = func.call @stack_scan(%c) : (tensor<f32>) -> (tensor<f32>, tensor<1099511627776xf32>)
  return %0#0 : tensor<f32>
}
func.func private @stack_scan(tensor<f32>) -> (tensor<f32>, tensor<1099511627776xf32>) attributes {mlax.scan = {body = @stack_step, length = 1099511627776 : i64, reverse = false, num_carry = 1 : i64, num_consts = 0 : i64}}
func.func private @stack_step(%c: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  return %c, %c : tensor<f32>, tensor<f32>
}

// The arguments mlax-run makes for the entry.
// ARGUMENT: mlax-run-bounds.mlir:[[@LINE+1]]:1: error: cannot make the arguments of @test_argument: argument 0 of @test_argument is tensor<1099511627776xf32> (4.0 TiB)
func.func @test_argument(%x: tensor<1099511627776xf32>) -> tensor<1099511627776xf32> {
  return %x : tensor<1099511627776xf32>
}
