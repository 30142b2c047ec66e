// RUN: %mlax-opt %s --split-input-file --verify-diagnostics
// RUN: %mlax-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mlax-cpu-pipeline)'

// Text the bundled MLIR (an assertions build) would abort on is refused before it is
// parsed, with a located error (tools/source_guard.py); each chunk once aborted mlax-opt.

// An integer past int64 where a custom parser reads it (linalg's dimensions lists).
func.func @test_dimension_list(%x: tensor<3xf32>, %init: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{integer 9223372036854775808 does not fit in 64 bits (signed)}}
  %0 = linalg.reduce ins(%x : tensor<3xf32>) outs(%init : tensor<f32>) dimensions = [9223372036854775808]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  return %0 : tensor<f32>
}

// -----

func.func @test_hex_permutation(%x: tensor<2x2xf32>, %init: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{integer 0xFFFFFFFFFFFFFFFFFF does not fit in 64 bits (signed)}}
  %0 = linalg.transpose ins(%x : tensor<2x2xf32>) outs(%init : tensor<2x2xf32>) permutation = [0xFFFFFFFFFFFFFFFFFF, 0]
  return %0 : tensor<2x2xf32>
}

// -----

// Any malformed list there aborted the parser: a float, a typed integer, a missing bracket.
func.func @test_float_dimension(%x: tensor<3xf32>, %init: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{dimensions must be a list of integers ([0, 1])}}
  %0 = linalg.reduce ins(%x : tensor<3xf32>) outs(%init : tensor<f32>) dimensions = [1.5]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  return %0 : tensor<f32>
}

// -----

// An mlax attribute too: MLIR would wrap it to -2**63 without a word.
func.func @test_array_element(%x: tensor<3xf32>) -> tensor<f32> {
  // expected-error@+1 {{integer 9223372036854775808 does not fit in 64 bits (signed)}}
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 9223372036854775808>} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A dimension past int64.
// expected-error@+1 {{dimension 99999999999999999999 does not fit in 64 bits (signed)}}
func.func private @test_huge_dimension(tensor<2x99999999999999999999xf32>)

// -----

// Dimensions whose product (the element count, the outer strides) overflows int64: the
// parser's element count of a dense literal, the strided layouts of the CPU pipeline.
// A type is reported where it first appears.
func.func @test_element_count() -> tensor<f32> {
  // expected-error@+1 {{the nonzero dimensions of tensor<4611686018427387904x2xf32> multiply to 9223372036854775808, past int64}}
  %0 = "mlax.constant"() {value = dense<1.0> : tensor<4611686018427387904x2xf32>} : () -> tensor<4611686018427387904x2xf32>
  %1 = "mlax.reduce_sum"(%0) {dimensions = array<i64: 0, 1>} : (tensor<4611686018427387904x2xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// expected-error@+1 {{the nonzero dimensions of tensor<2x9223372036854775807xf32> multiply to 18446744073709551614}}
func.func @test_strides(%x: tensor<2x9223372036854775807xf32>) -> tensor<2x9223372036854775807xf32> {
  return %x : tensor<2x9223372036854775807xf32>
}

// -----

// An empty dimension does not hide the others: strides still multiply them.
// expected-error@+1 {{the nonzero dimensions of memref<0x4611686018427387904x2xf32> multiply to 9223372036854775808}}
func.func private @test_strides_beside_zero(memref<0x4611686018427387904x2xf32>)

// -----

// linalg.batch_matmul builds its body while it is parsed, and aborts on index elements.
func.func @test_batch_matmul_index(%a: memref<2x2x2xindex>) {
  // expected-error@+1 {{linalg.batch_matmul of index elements is not supported}}
  linalg.batch_matmul ins(%a, %a : memref<2x2x2xindex>, memref<2x2x2xindex>) outs(%a : memref<2x2x2xindex>)
  return
}

// -----

// A dense array of index (the parser asks it for a bit width) or of a type the Python
// bindings cannot read.
// expected-error@+1 {{a dense array holds i1, i8, i16, i32, i64, f32, f64, not 'index'}}
func.func private @test_index_array() attributes {x = array<index>}

// -----

// expected-error@+1 {{a dense array holds i1, i8, i16, i32, i64, f32, f64, not 'f16'}}
func.func private @test_f16_array() attributes {x = array<f16: 1.0>}

// -----

// What MLIR range-checks itself may exceed int64: typed literals and dense elements; and
// nothing in comments or strings is read (9223372036854775808, tensor<4611686018427387904x2xf32>).
func.func @test_no_guard() -> tensor<2xui64> attributes {note = "99999999999999999999", big = 18446744073709551615 : ui64, a = array<i16: 1>, t = !llvm.array<2 x f32>} {
  %0 = "mlax.constant"() {value = dense<[18446744073709551615, 9223372036854775808]> : tensor<2xui64>} : () -> tensor<2xui64>
  return %0 : tensor<2xui64>
}

// -----

// The LLVM dialect's array type is spelled without `!llvm.` inside its struct types (the
// CPU pipeline's memref descriptors): `array<1 x i64>` opens with a length, not an element
// type, and is no dense array.
llvm.func @test_no_guard_llvm_array(%d: !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<2 x array<3 x f16>>)>) {
  llvm.return
}
