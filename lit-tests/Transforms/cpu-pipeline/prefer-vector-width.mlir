// RUN: %mlax-opt --mlax-prefer-vector-width %s | FileCheck %s
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-prefer-vector-width{bits=256})' %s | FileCheck %s --check-prefix=W256
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-prefer-vector-width{bits=0})' %s | FileCheck %s --check-prefix=NONE

// CHECK-LABEL: func.func @test_definition
// CHECK-SAME:    attributes {passthrough = {{\[\[}}"prefer-vector-width", "512"]]}
// W256-LABEL:  func.func @test_definition
// W256-SAME:     attributes {passthrough = {{\[\[}}"prefer-vector-width", "256"]]}
// NONE-LABEL:  func.func @test_definition(%arg0: memref<4xf32>) {
func.func @test_definition(%a: memref<4xf32>) {
  return
}

// Other passthrough entries stay; an existing width is replaced.
// CHECK-LABEL: llvm.func @test_existing
// CHECK-SAME:    passthrough = ["nounwind", {{\[}}"prefer-vector-width", "512"]]
llvm.func @test_existing() attributes {passthrough = ["nounwind", ["prefer-vector-width", "128"]]} {
  llvm.return
}

// Declarations are left alone.
// CHECK-LABEL: func.func private @test_declaration(memref<4xf32>)
// CHECK-NOT:     passthrough
func.func private @test_declaration(memref<4xf32>)
