// RUN: %mlax-opt --split-input-file --pass-pipeline='builtin.module(mlax-gpu-pipeline{to=gpu})' %s | FileCheck %s
// RUN: %mlax-opt --split-input-file --pass-pipeline='builtin.module(mlax-gpu-pipeline)' %s | %PYTHON -c "import sys; print(sys.stdin.read().replace(chr(92) + '0A', chr(10)).replace(chr(92) + '09', chr(32)))" | FileCheck %s --check-prefix=PTX

// Elementwise programs through the GPU pipeline (mlax-gpu-vectorize, mlax-gpu-noalias): the
// PTX of each kernel (the gpu.binary's assembly, unescaped) moves 16 bytes per thread with
// ld.global.nc.v4 (read-only noalias arguments go through the non-coherent cache) and
// st.global.v4 where the inner dimension allows it, and keeps scalar accesses otherwise.
// NVPTX writes 32-bit vector moves as .b32 whatever the element type; f16/bf16 pairs and
// bytes are packed into 32-bit words (v4.b32 = 8 halves or 16 bytes) and f64 is v2.b64.

// tanh(x * row + column): the row (1x64) is a vector per thread, the column (8x1) one scalar
// per row shared by the 4 lanes; 64 / 4 = 16 vectors along x in one block of 32x8.
// CHECK-LABEL: func.func @jit.chain(
// CHECK:         gpu.launch_func @jit.chain_kernel::@jit_chain_kernel blocks in (%c1, %c1, %c1) threads in (%c32, %c8, %c1)
// CHECK:         gpu.func @jit_chain_kernel(%{{.*}}: index, %{{.*}}: index, %[[X:.*]]: memref<8x64xf32> {llvm.noalias, llvm.readonly}, %[[R:.*]]: memref<1x64xf32> {llvm.noalias, llvm.readonly}, %[[C:.*]]: memref<8x1xf32> {llvm.noalias, llvm.readonly}, %[[Y:.*]]: memref<8x64xf32> {llvm.noalias})
// CHECK:           vector.load %[[X]][{{.*}}] {alignment = 16 : i64} : memref<8x64xf32>, vector<4xf32>
// CHECK:           vector.load %[[R]][{{.*}}] {alignment = 16 : i64} : memref<1x64xf32>, vector<4xf32>
// CHECK:           memref.load %[[C]]
// CHECK:           vector.store %{{.*}}, %[[Y]][{{.*}}] {alignment = 16 : i64} : memref<8x64xf32>, vector<4xf32>
// PTX-LABEL:   .visible .entry jit_chain_kernel(
// PTX-COUNT-2:   ld.global.nc.v4.b32 {{{.*}}}, [%rd{{[0-9]+}}];
// PTX-NOT:       ld.global
// PTX:           ld.global.nc.b32
// PTX-NOT:       ld.global
// PTX:           st.global.v4.b32 [%rd{{[0-9]+}}], {{{.*}}};
// PTX-NOT:       st.global
// PTX:         }
func.func @chain(%arg0: tensor<8x64xf32>, %arg1: tensor<64xf32>, %arg2: tensor<8xf32>) -> tensor<8x64xf32> {
  %0 = "mlax.reshape"(%arg1) {shape = array<i64: 1, 64>} : (tensor<64xf32>) -> tensor<1x64xf32>
  %1 = "mlax.broadcast_in_dim"(%0) {broadcast_dimensions = array<i64: 0, 1>, shape = array<i64: 8, 64>} : (tensor<1x64xf32>) -> tensor<8x64xf32>
  %2 = "mlax.mul"(%arg0, %1) : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %3 = "mlax.reshape"(%arg2) {shape = array<i64: 8, 1>} : (tensor<8xf32>) -> tensor<8x1xf32>
  %4 = "mlax.broadcast_in_dim"(%3) {broadcast_dimensions = array<i64: 0, 1>, shape = array<i64: 8, 64>} : (tensor<8x1xf32>) -> tensor<8x64xf32>
  %5 = "mlax.add"(%2, %4) : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %6 = "mlax.tanh"(%5) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %6 : tensor<8x64xf32>
}

// -----

// f16: 8 halves (16 bytes) per thread.
// CHECK-LABEL: func.func @jit.halves(
// CHECK-COUNT-2:   vector.load {{.*}} {alignment = 16 : i64} : memref<4x64xf16>, vector<8xf16>
// CHECK:           vector.store {{.*}} {alignment = 16 : i64} : memref<4x64xf16>, vector<8xf16>
// PTX-LABEL:   .visible .entry jit_halves_kernel(
// PTX-COUNT-2:   ld.global.nc.v4.b32
// PTX:           st.global.v4.b32
func.func @halves(%arg0: tensor<4x64xf16>, %arg1: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %0 = "mlax.mul"(%arg0, %arg1) : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
  %1 = "mlax.add"(%0, %arg0) : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
  return %1 : tensor<4x64xf16>
}

// -----

// A convert f32 -> bf16: the wider element decides (4 lanes): 16 bytes in, 8 bytes out.
// CHECK-LABEL: func.func @jit.bf16(
// CHECK:           vector.load {{.*}} {alignment = 16 : i64} : memref<4x64xf32>, vector<4xf32>
// CHECK:           vector.store {{.*}} {alignment = 8 : i64} : memref<4x64xbf16>, vector<4xbf16>
// PTX-LABEL:   .visible .entry jit_bf16_kernel(
// PTX:           ld.global.nc.v4.b32
// PTX-COUNT-2:   cvt.rn.bf16x2.f32
// PTX:           st.global.v2.b32
func.func @bf16(%arg0: tensor<4x64xf32>) -> tensor<4x64xbf16> {
  %0 = "mlax.constant"() {value = dense<2.000000e+00> : tensor<4x64xf32>} : () -> tensor<4x64xf32>
  %1 = "mlax.mul"(%arg0, %0) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %2 = "mlax.convert"(%1) {new_dtype = bf16} : (tensor<4x64xf32>) -> tensor<4x64xbf16>
  return %2 : tensor<4x64xbf16>
}

// -----

// Bools are bytes: 16 per thread, loaded as 32-bit words (a byte vector would be split into
// 16 byte loads by NVPTX) and stored as one 16-byte vector.
// CHECK-LABEL: func.func @jit.logical(
// CHECK:           %[[B:.*]] = vector.load {{.*}} {alignment = 16 : i64} : memref<4x64xi8>, vector<16xi8>
// CHECK-NEXT:      vector.bitcast %[[B]] : vector<16xi8> to vector<4xi32>
// CHECK:           vector.store {{.*}} {alignment = 16 : i64} : memref<4x64xi8>, vector<16xi8>
// PTX-LABEL:   .visible .entry jit_logical_kernel(
// PTX-NOT:       ld.global.nc.b8
// PTX-COUNT-2:   ld.global.nc.v4.b32
// PTX-NOT:       ld.global.nc.b8
// PTX:           st.global.v4.b32
func.func @logical(%arg0: tensor<4x64xi1>, %arg1: tensor<4x64xi1>) -> tensor<4x64xi1> {
  %0 = "mlax.not"(%arg1) : (tensor<4x64xi1>) -> tensor<4x64xi1>
  %1 = "mlax.and"(%arg0, %0) : (tensor<4x64xi1>, tensor<4x64xi1>) -> tensor<4x64xi1>
  return %1 : tensor<4x64xi1>
}

// -----

// 63 columns: no lane count divides them (and rows would start unaligned): one thread per
// element, scalar loads and stores (still through the read-only cache).
// CHECK-LABEL: func.func @jit.odd(
// CHECK:         blocks in (%c2, %c1, %c1) threads in (%c32, %c8, %c1)
// CHECK-NOT:       vector.
// CHECK:           memref.store
// PTX-LABEL:   .visible .entry jit_odd_kernel(
// PTX-NOT:       .v2.
// PTX-NOT:       .v4.
// PTX-COUNT-2:   ld.global.nc.b32
// PTX:           st.global.b32
// PTX:         }
func.func @odd(%arg0: tensor<5x63xf32>, %arg1: tensor<5x63xf32>) -> tensor<5x63xf32> {
  %0 = "mlax.mul"(%arg0, %arg1) : (tensor<5x63xf32>, tensor<5x63xf32>) -> tensor<5x63xf32>
  %1 = "mlax.constant"() {value = dense<1.000000e+00> : tensor<5x63xf32>} : () -> tensor<5x63xf32>
  %2 = "mlax.add"(%0, %1) : (tensor<5x63xf32>, tensor<5x63xf32>) -> tensor<5x63xf32>
  return %2 : tensor<5x63xf32>
}

// -----

// A transpose: the output is contiguous along x, the input is not (it walks a column): the
// kernel stays scalar.
// CHECK-LABEL: func.func @jit.transpose(
// CHECK-NOT:       vector.
// CHECK:           memref.store
// PTX-LABEL:   .visible .entry jit_transpose_kernel(
// PTX-NOT:       .v4.
// PTX:           ld.global.nc.b32
// PTX:           st.global.b32
// PTX:         }
func.func @transpose(%arg0: tensor<8x64xf32>) -> tensor<64x8xf32> {
  %0 = "mlax.transpose"(%arg0) {permutation = array<i64: 1, 0>} : (tensor<8x64xf32>) -> tensor<64x8xf32>
  %1 = "mlax.constant"() {value = dense<2.000000e+00> : tensor<64x8xf32>} : () -> tensor<64x8xf32>
  %2 = "mlax.mul"(%0, %1) : (tensor<64x8xf32>, tensor<64x8xf32>) -> tensor<64x8xf32>
  return %2 : tensor<64x8xf32>
}

// -----

// A view of an argument at an offset of 1 float: not 16-byte aligned, scalar; at an offset of
// 4 floats (16 bytes, rows of 64 floats): vectorized.
// CHECK-LABEL: func.func @jit.unaligned(
// CHECK-NOT:       vector.
// CHECK:           memref.load %{{.*}} : memref<8x32xf32, strided<[64, 1], offset: 1>>
// CHECK-LABEL: func.func @jit.aligned(
// CHECK:           vector.load %{{.*}} {alignment = 16 : i64} : memref<8x32xf32, strided<[64, 1], offset: 4>>, vector<4xf32>
// PTX-LABEL:   .visible .entry jit_unaligned_kernel(
// PTX-NOT:       .v4.
// PTX:           ld.global.nc.b32 %r{{[0-9]+}}, [%rd{{[0-9]+}}+4];
// PTX:         }
// PTX-LABEL:   .visible .entry jit_aligned_kernel(
// PTX:           ld.global.nc.v4.b32 {{{.*}}}, [%rd{{[0-9]+}}+16];
// PTX:           st.global.v4.b32
func.func @unaligned(%x: tensor<8x64xf32>) -> tensor<8x32xf32> {
  %s = tensor.extract_slice %x[0, 1] [8, 32] [1, 1] : tensor<8x64xf32> to tensor<8x32xf32>
  %0 = "mlax.exp"(%s) : (tensor<8x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}
func.func @aligned(%x: tensor<8x64xf32>) -> tensor<8x32xf32> {
  %s = tensor.extract_slice %x[0, 4] [8, 32] [1, 1] : tensor<8x64xf32> to tensor<8x32xf32>
  %0 = "mlax.exp"(%s) : (tensor<8x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}
