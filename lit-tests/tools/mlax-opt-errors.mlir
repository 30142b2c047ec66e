// Bad input gives MLIR diagnostics (file:line:col, the source line, a caret) and a
// failing exit status, never a Python traceback.
// RUN: not %mlax-opt --split-input-file %s 2>&1 | FileCheck %s --implicit-check-not=Traceback
// RUN: not %mlax-opt --pass-pipeline='builtin.module(no-such-pass)' %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN-PASS --implicit-check-not=Traceback
// RUN: not %mlax-opt --mlax-cleanup='no-such-option=1' %s 2>&1 | FileCheck %s --check-prefix=BAD-OPTION --implicit-check-not=Traceback
// RUN: not %mlax-opt --pass-pipeline='builtin.module(func.func(mlax-cleanup))' %s 2>&1 | FileCheck %s --check-prefix=NESTED --implicit-check-not=Traceback
// RUN: not %mlax-opt --pass-pipeline='builtin.module(cse' %s 2>&1 | FileCheck %s --check-prefix=SYNTAX --implicit-check-not=Traceback
// RUN: not %mlax-opt %s.does-not-exist 2>&1 | FileCheck %s --check-prefix=MISSING --implicit-check-not=Traceback

// UNKNOWN-PASS: mlax-opt: error: pass pipeline: bad element 'no-such-pass': 'no-such-pass' does not refer to a registered pass or pass pipeline
// BAD-OPTION: mlax-opt: error: pass pipeline: mlax-cleanup: unknown option 'no-such-option' (options: fold-limit, max-iterations, fold, simplify, cse, dce)
// NESTED: mlax-opt: error: pass pipeline: mlax-cleanup is a module pass; it cannot be nested under 'func.func'
// SYNTAX: mlax-opt: error: pass pipeline: expected ')' at column 19 of 'builtin.module(cse'
// MISSING: mlax-opt: error: could not open input file '{{.*}}.does-not-exist': No such file or directory

// Each chunk of a split file is reported on its own, with the line numbers of the file.

// CHECK: mlax-opt-errors.mlir:[[@LINE+4]]:24: error: expected '{' to begin a region
// CHECK-NEXT: {{^}}  %0 = "mlax.neg"(%x) (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: {{^}}                       ^
func.func @syntax_error(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.neg"(%x) (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK: mlax-opt-errors.mlir:[[@LINE+2]]:8: error: unregistered operation 'mlax.no_such_op' found in dialect ('mlax')
func.func @unknown_op(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.no_such_op"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK: mlax-opt-errors.mlir:[[@LINE+2]]:8: error: 'mlax.reshape' op
func.func @inference_error(%x: tensor<2x3xf32>) -> tensor<5xf32> {
  %0 = "mlax.reshape"(%x) {shape = array<i64: 5>} : (tensor<2x3xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// CHECK: mlax-opt-errors.mlir:[[@LINE+1]]:1: error: mlax.grad declaration @bad_declaration: unknown transformation kind 'mlax.grad'
func.func private @bad_declaration(tensor<3xf32>) -> tensor<3xf32> attributes {mlax.grad = {callee = @inference_error}}
