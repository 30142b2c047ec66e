// RUN: %mlax-opt --mlax-lower-callbacks %s | FileCheck %s

// A callback call becomes a call of the host entry point on a record: the descriptor words
// (id, operand and result counts, then dtype code, rank and dims of every buffer), then the
// buffer addresses. Result buffers are allocated here; the declaration is erased.
// CHECK-LABEL: func.func @test_pure
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<2xf32>
// CHECK:         memref.alloca_scope {
// CHECK:           %[[IN:.*]] = bufferization.to_buffer %arg0 read_only : tensor<2xi32> to memref<2xi32>
// CHECK:           %[[REC:.*]] = memref.alloca() : memref<11xi64>
// CHECK-DAG:       memref.extract_aligned_pointer_as_index %[[IN]]
// CHECK-DAG:       memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK:           func.call @mlax_host_callback(%{{.*}}) : (i64) -> ()
// CHECK:         }
// CHECK:         %[[T:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<2xf32> to tensor<2xf32>
// CHECK:         return %[[T]]
// CHECK-NOT:   mlax.callback
func.func @test_pure(%n: tensor<2xi32>) -> tensor<2xf32> {
  %0 = func.call @as_float(%n) : (tensor<2xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @as_float(tensor<2xi32>) -> tensor<2xf32> attributes {mlax.callback = {id = 7 : i64, kind = "pure", ordered = false, name = "as_float"}}

// Booleans travel as bytes: converted on each side.
// CHECK-LABEL: func.func @test_bool
// CHECK:         "mlax.convert"(%arg0) {new_dtype = i8} : (tensor<i1>) -> tensor<i8>
// CHECK:         func.call @mlax_host_callback
// CHECK:         "mlax.convert"(%{{.*}}) {new_dtype = i1} : (tensor<i8>) -> tensor<i1>
func.func @test_bool(%p: tensor<i1>) -> tensor<i1> {
  %0 = func.call @negate(%p) : (tensor<i1>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func private @negate(tensor<i1>) -> tensor<i1> attributes {mlax.callback = {id = 8 : i64, kind = "pure", ordered = false, name = "negate"}}

// A debug callback always stays, in order; an unused pure one is dropped (jax drops it).
// CHECK-LABEL: func.func @test_no_unused_pure
// CHECK-COUNT-2: func.call @mlax_host_callback
// CHECK-NOT:     func.call @mlax_host_callback
// CHECK:         return
func.func @test_no_unused_pure(%x: tensor<f32>) -> tensor<f32> {
  func.call @show(%x) : (tensor<f32>) -> ()
  %0 = func.call @unused(%x) : (tensor<f32>) -> tensor<f32>
  func.call @show(%x) : (tensor<f32>) -> ()
  return %x : tensor<f32>
}
func.func private @show(tensor<f32>) attributes {mlax.callback = {id = 9 : i64, kind = "debug", ordered = false, name = "show"}}
func.func private @unused(tensor<f32>) -> tensor<f32> attributes {mlax.callback = {id = 10 : i64, kind = "pure", ordered = false, name = "unused"}}

// An io callback is an effect: it stays with its results unused.
// CHECK-LABEL: func.func @test_io_unused
// CHECK-COUNT-2: func.call @mlax_host_callback
// CHECK-NOT:     func.call @mlax_host_callback
// CHECK:         return
func.func @test_io_unused(%x: tensor<f32>) -> tensor<f32> {
  %0 = func.call @read(%x) : (tensor<f32>) -> tensor<f32>
  %1 = func.call @read(%x) : (tensor<f32>) -> tensor<f32>
  return %x : tensor<f32>
}
func.func private @read(tensor<f32>) -> tensor<f32> attributes {mlax.callback = {id = 9 : i64, kind = "io", ordered = false, name = "read"}}
