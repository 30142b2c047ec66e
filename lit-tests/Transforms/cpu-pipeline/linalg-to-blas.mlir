// RUN: %mlax-opt --pass-pipeline='builtin.module(linalg-generalize-named-ops, mlax-linalg-to-blas)' %s | FileCheck %s

// An f32 matmul on row-major buffers: one cblas-style sgemm call (row-major = 101,
// no transpose = 111, M N K, alpha = 1, A lda B ldb, beta, C ldc). The zero fill just before
// it is erased and beta = 0: BLAS writes C without reading it.
// CHECK-DAG:   func.func private @mlax_sgemm(i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
// CHECK-DAG:   func.func private @mlax_dgemm(i32, i32, i32, i64, i64, i64, f64, !llvm.ptr, i64, !llvm.ptr, i64, f64, !llvm.ptr, i64)
// CHECK-DAG:   func.func private @mlax_cgemm(i32, i32, i32, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, i64)
// CHECK-DAG:   func.func private @mlax_sgemm_batch(i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64)
// CHECK-DAG:   memref.global "private" constant @mlax_complex_one_f32 : memref<2xf32> = dense<[1.000000e+00, 0.000000e+00]>
// CHECK-LABEL: func.func @test_matmul
// CHECK-DAG:     %[[M:.*]] = arith.constant 8 : i64
// CHECK-DAG:     %[[N:.*]] = arith.constant 16 : i64
// CHECK-DAG:     %[[K:.*]] = arith.constant 4 : i64
// CHECK-DAG:     %[[ROW:.*]] = arith.constant 101 : i32
// CHECK-DAG:     %[[NT:.*]] = arith.constant 111 : i32
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[IA:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK-DAG:     %[[IB:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK-DAG:     %[[IC:.*]] = memref.extract_aligned_pointer_as_index %arg2
// CHECK-NOT:     linalg.generic
// CHECK:         %[[PA:.*]] = llvm.inttoptr
// CHECK:         %[[PB:.*]] = llvm.inttoptr
// CHECK:         %[[PC:.*]] = llvm.inttoptr
// CHECK:         call @mlax_sgemm(%[[ROW]], %[[NT]], %[[NT]], %[[M]], %[[N]], %[[K]], %[[ONE]], %[[PA]], %[[K]], %[[PB]], %[[N]], %[[ZERO]], %[[PC]], %[[N]])
// CHECK-NOT:     arith.mulf
func.func @test_matmul(%a: memref<8x4xf32>, %b: memref<4x16xf32>, %c: memref<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x16xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32>)
  return
}

// The fill of a buffer the gemm writes through a reshape (the same elements), with an
// unrelated op between them: beta = 0, the fill erased.
// CHECK-LABEL: func.func @test_zero_fill_of_reshape
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT:     linalg.generic {{.*}}outs(%arg2
// CHECK:         linalg.generic {{.*}}outs(%arg3
// CHECK-NOT:     linalg.generic
// CHECK:         call @mlax_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO]],
func.func @test_zero_fill_of_reshape(%a: memref<8x4xf32>, %b: memref<4x16xf32>, %c: memref<8x2x8xf32>,
                                     %other: memref<3xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x2x8xf32>)
  linalg.fill ins(%zero : f32) outs(%other : memref<3xf32>)
  %flat = memref.collapse_shape %c [[0], [1, 2]] : memref<8x2x8xf32> into memref<8x16xf32>
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%flat : memref<8x16xf32>)
  return
}

// The fill stays and beta = 1 where the output holds more than zeros at the gemm: a fill of
// another value, a write between the fill and the gemm (through a view of the buffer), a fill
// of only a part of the buffer (the gemm writes a subview), a fill in another block, a call
// between them (it may write the buffer through a pointer taken before).
// CHECK-LABEL: func.func @test_no_zero_fill
// CHECK:         %[[O1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         call @mlax_sgemm({{.*}}, %[[O1]], %{{[0-9]+}}, %{{[a-z0-9_]+}}) :
// CHECK:         linalg.generic
// CHECK:         %[[O2:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         call @mlax_sgemm({{.*}}, %[[O2]], %{{[0-9]+}}, %{{[a-z0-9_]+}}) :
// CHECK:         linalg.generic
// CHECK:         %[[O3:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         call @mlax_sgemm({{.*}}, %[[O3]], %{{[0-9]+}}, %{{[a-z0-9_]+}}) :
// CHECK:         scf.if
// CHECK-NEXT:      linalg.generic
// CHECK:         %[[O4:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         call @mlax_sgemm({{.*}}, %[[O4]], %{{[0-9]+}}, %{{[a-z0-9_]+}}) :
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      linalg.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    call @opaque()
// CHECK:         %[[O5:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         call @mlax_sgemm({{.*}}, %[[O5]], %{{[0-9]+}}, %{{[a-z0-9_]+}}) :
func.func @test_no_zero_fill(%a: memref<8x4xf32>, %b: memref<4x16xf32>, %c1: memref<8x16xf32>,
                             %c2: memref<8x16xf32>, %c3: memref<9x16xf32>, %c4: memref<8x16xf32>, %p: i1) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %i = arith.constant 1 : index
  linalg.fill ins(%two : f32) outs(%c1 : memref<8x16xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%c1 : memref<8x16xf32>)
  linalg.fill ins(%zero : f32) outs(%c2 : memref<8x16xf32>)
  %v = memref.collapse_shape %c2 [[0, 1]] : memref<8x16xf32> into memref<128xf32>
  memref.store %two, %v[%i] : memref<128xf32>
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%c2 : memref<8x16xf32>)
  linalg.fill ins(%zero : f32) outs(%c3 : memref<9x16xf32>)
  %s = memref.subview %c3[0, 0] [8, 16] [1, 1] : memref<9x16xf32> to memref<8x16xf32, strided<[16, 1]>>
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%s : memref<8x16xf32, strided<[16, 1]>>)
  scf.if %p {
    linalg.fill ins(%zero : f32) outs(%c4 : memref<8x16xf32>)
  }
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%c4 : memref<8x16xf32>)
  linalg.fill ins(%zero : f32) outs(%c1 : memref<8x16xf32>)
  func.call @opaque() : () -> ()
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%c1 : memref<8x16xf32>)
  return
}
func.func private @opaque()

// A batch: a loop of dgemm calls on pointers advanced by one matrix (in bytes) per step.
// CHECK-LABEL: func.func @test_batch
// CHECK:         scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           %[[I:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK:           arith.muli %[[I]], %{{.*}} : i64
// CHECK:           call @mlax_dgemm
func.func @test_batch(%a: memref<3x2x5xf64>, %b: memref<3x5x7xf64>, %c: memref<3x2x7xf64>) {
  linalg.batch_matmul ins(%a, %b : memref<3x2x5xf64>, memref<3x5x7xf64>) outs(%c : memref<3x2x7xf64>)
  return
}

// x @ w.T read straight from w (N x K): the transpose flag (112) on b, ldb = K.
// CHECK-LABEL: func.func @test_transposed_b
// CHECK-DAG:     %[[T:.*]] = arith.constant 112 : i32
// CHECK-DAG:     %[[NT:.*]] = arith.constant 111 : i32
// CHECK-DAG:     %[[K:.*]] = arith.constant 6 : i64
// CHECK-DAG:     %[[N:.*]] = arith.constant 5 : i64
// CHECK:         call @mlax_sgemm(%{{.*}}, %[[NT]], %[[T]], %{{.*}}, %[[N]], %[[K]], %{{.*}}, %{{.*}}, %[[K]], %{{.*}}, %[[K]], %{{.*}}, %{{.*}}, %[[N]])
func.func @test_transposed_b(%x: memref<2x6xf32>, %w: memref<5x6xf32>, %c: memref<2x5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                   affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x6xf32>, memref<5x6xf32>) outs(%c : memref<2x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// A contraction over two dims at once (what fusion makes of collapse + matmul + expand):
// the K group (4x5) and the N group (3x7) are each one contiguous run: M=2, N=21, K=20.
// CHECK-LABEL: func.func @test_grouped
// CHECK-DAG:     %[[M:.*]] = arith.constant 2 : i64
// CHECK-DAG:     %[[N:.*]] = arith.constant 21 : i64
// CHECK-DAG:     %[[K:.*]] = arith.constant 20 : i64
// CHECK:         call @mlax_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %[[M]], %[[N]], %[[K]],
func.func @test_grouped(%x: memref<2x4x5xf32>, %w: memref<4x5x3x7xf32>, %c: memref<2x3x7xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n1, n2, k1, k2) -> (m, k1, k2)>,
                                   affine_map<(m, n1, n2, k1, k2) -> (k1, k2, n1, n2)>,
                                   affine_map<(m, n1, n2, k1, k2) -> (m, n1, n2)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w : memref<2x4x5xf32>, memref<4x5x3x7xf32>) outs(%c : memref<2x3x7xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %b, %a : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// Left alone: integers, tensors, strided views, empty dims, K groups in different orders,
// a body that is not out + a * b.
// CHECK-LABEL: func.func @test_left_alone
// CHECK-COUNT-6: arith.mul
// CHECK-NOT:     call @mlax_
func.func @test_left_alone(%ai: memref<2x3xi32>, %bi: memref<3x4xi32>, %ci: memref<2x4xi32>,
                           %at: tensor<2x3xf32>, %bt: tensor<3x4xf32>, %ct: tensor<2x4xf32>,
                           %as: memref<2x3xf32, strided<[6, 1]>>, %bs: memref<3x4xf32>, %cs: memref<2x4xf32>,
                           %ae: memref<2x0xf32>, %be: memref<0x4xf32>, %ce: memref<2x4xf32>,
                           %ak: memref<2x4x5xf32>, %bk: memref<5x4x3xf32>, %ck: memref<2x3xf32>) -> tensor<2x4xf32> {
  linalg.matmul ins(%ai, %bi : memref<2x3xi32>, memref<3x4xi32>) outs(%ci : memref<2x4xi32>)
  %r = linalg.matmul ins(%at, %bt : tensor<2x3xf32>, tensor<3x4xf32>) outs(%ct : tensor<2x4xf32>) -> tensor<2x4xf32>
  linalg.matmul ins(%as, %bs : memref<2x3xf32, strided<[6, 1]>>, memref<3x4xf32>) outs(%cs : memref<2x4xf32>)
  linalg.matmul ins(%ae, %be : memref<2x0xf32>, memref<0x4xf32>) outs(%ce : memref<2x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(m, n, k1, k2) -> (m, k1, k2)>,
                                   affine_map<(m, n, k1, k2) -> (k2, k1, n)>,
                                   affine_map<(m, n, k1, k2) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%ak, %bk : memref<2x4x5xf32>, memref<5x4x3xf32>) outs(%ck : memref<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                   affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%as, %bs : memref<2x3xf32, strided<[6, 1]>>, memref<3x4xf32>) outs(%cs : memref<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  return %r : tensor<2x4xf32>
}

// A dense slice at an offset (a step of a scan reading its stacked operand) is a matrix too:
// the pointer passed is the allocation's aligned pointer plus offset * 4 bytes.
// CHECK-LABEL: func.func @test_slice_at_offset
// CHECK:         %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[A:.*]] :
// CHECK:         %{{.*}}, %[[OFFSET:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[A]]
// CHECK:         %[[BYTES:.*]] = arith.muli %[[OFFSET]], %c4
// CHECK:         %[[ADDR:.*]] = arith.addi %[[BASE]], %[[BYTES]]
// CHECK:         %[[A64:.*]] = arith.index_cast %[[ADDR]]
// CHECK:         %[[PA:.*]] = llvm.inttoptr %[[A64]]
// CHECK:         call @mlax_sgemm({{.*}}, %[[PA]], %c3_i64,
func.func @test_slice_at_offset(%stack: memref<5x2x3xf32>, %i: index, %b: memref<3x4xf32>, %c: memref<2x4xf32>) {
  %a = memref.subview %stack[%i, 0, 0] [1, 2, 3] [1, 1, 1] : memref<5x2x3xf32> to memref<2x3xf32, strided<[3, 1], offset: ?>>
  linalg.matmul ins(%a, %b : memref<2x3xf32, strided<[3, 1], offset: ?>>, memref<3x4xf32>) outs(%c : memref<2x4xf32>)
  return
}

// A complex matmul (complex.mul / complex.add before convert-complex-to-standard): cgemm, whose
// alpha and beta are pointers to a module-level constant 1 + 0i (declared at the top, above).
// CHECK-LABEL: func.func @test_complex
// CHECK:         %[[G:.*]] = memref.get_global @mlax_complex_one_f32 : memref<2xf32>
// CHECK:         %[[I:.*]] = memref.extract_aligned_pointer_as_index %[[G]]
// CHECK:         %[[A:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK:         %[[ONE:.*]] = llvm.inttoptr %[[A]] : i64 to !llvm.ptr
// CHECK:         call @mlax_cgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}})
// CHECK-NOT:     complex.mul
func.func @test_complex(%a: memref<8x4xcomplex<f32>>, %b: memref<4x16xcomplex<f32>>, %c: memref<8x16xcomplex<f32>>) {
  linalg.matmul ins(%a, %b : memref<8x4xcomplex<f32>>, memref<4x16xcomplex<f32>>) outs(%c : memref<8x16xcomplex<f32>>)
  return
}

// Threads by size: a product of fewer than 2**25 multiply-adds runs on the calling thread (a
// strided batch of one gemm: OpenBLAS's batch routine gives each of its threads whole gemms),
// a bigger batch is one batch call threaded over its gemms, a bigger single gemm the plain
// (threaded) routine. Gemms of at most 100x100x100 keep the plain routine (module docstring).
// CHECK-LABEL: func.func @test_threads_by_size
// CHECK:         call @mlax_sgemm_batch(%c101_i32, %c112_i32, %c111_i32, %c100_i64, %c100_i64{{.*}}, %c2560_i64, %cst, %{{.*}}, %c100_i64, %c256000_i64, {{.*}}, %c10000_i64, %c1_i64)
// CHECK-NOT:     scf.for
// CHECK:         call @mlax_sgemm_batch({{.*}}, %c128_i64{{.*}}, %c512_i64, {{.*}}, %c16384_i64, %c4_i64)
// CHECK-NOT:     scf.for
// CHECK:         call @mlax_sgemm(%c101_i32{{.*}}, %c1024_i64, %c256_i64
func.func @test_threads_by_size(%x: memref<2560x100xf32>, %g: memref<2560x100xf32>, %dw: memref<100x100xf32>,
                                %q: memref<4x128x512xf32>, %k: memref<4x512x128xf32>, %s: memref<4x128x128xf32>,
                                %h: memref<1024x256xf32>, %w: memref<256x256xf32>, %y: memref<1024x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>,
                                   affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %g : memref<2560x100xf32>, memref<2560x100xf32>) outs(%dw : memref<100x100xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  }
  linalg.batch_matmul ins(%q, %k : memref<4x128x512xf32>, memref<4x512x128xf32>) outs(%s : memref<4x128x128xf32>)
  linalg.matmul ins(%h, %w : memref<1024x256xf32>, memref<256x256xf32>) outs(%y : memref<1024x256xf32>)
  return
}
