// RUN: %mlax-opt --mlax-unfuse-contractions %s | FileCheck %s
// RUN: %mlax-opt --mlax-unfuse-contractions %s | %mlir-opt > /dev/null
// RUN: %mlax-opt --pass-pipeline='builtin.module(mlax-cpu-pipeline{to=buffers})' %s | FileCheck %s --check-prefix=GEMM

#x = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0)>
#scale = affine_map<(d0, d1, d2, d3) -> (d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#xt = affine_map<(d0, d1, d2) -> (d2, d0)>
#g = affine_map<(d0, d1, d2) -> (d2, d1)>
#o2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#all = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>

module {
  // A layer norm that fusion put inside x @ w (batch 2, rows 3, width 4, 5 outputs): the
  // normalisation gets its own parallel op over (batch, rows, width), read as x was, and the
  // contraction is out + a * b again.
  // CHECK-LABEL: func.func @test_layer_norm_then_matmul
  // CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<2x3x4xf32>
  // CHECK:         %[[NORM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %arg1, %arg2 : tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<4xf32>) outs(%[[EMPTY]] : tensor<2x3x4xf32>)
  // CHECK-NEXT:    ^bb0
  // CHECK-NEXT:      arith.subf
  // CHECK-NEXT:      arith.mulf
  // CHECK-NEXT:      linalg.yield
  // CHECK-NEXT:    } -> tensor<2x3x4xf32>
  // CHECK-NEXT:    linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[NORM]], %arg3 : tensor<2x3x4xf32>, tensor<4x5xf32>)
  // CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[OUT:.*]]: f32):
  // CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
  // CHECK-NEXT:      %[[S:.*]] = arith.addf %[[OUT]], %[[P]] fastmath<reassoc> : f32
  // CHECK-NEXT:      linalg.yield %[[S]] : f32
  // GEMM-LABEL: func.func @{{.*}}test_layer_norm_then_matmul
  // GEMM: call @mlax_sgemm
  func.func @test_layer_norm_then_matmul(%x: tensor<2x3x4xf32>, %mean: tensor<2x3x1xf32>, %scale: tensor<4xf32>,
                                         %w: tensor<4x5xf32>, %init: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
    %r = linalg.generic {indexing_maps = [#x, #row, #scale, #w, #out],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%x, %mean, %scale, %w : tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<4xf32>, tensor<4x5xf32>)
        outs(%init : tensor<2x3x5xf32>) {
    ^bb0(%a: f32, %m: f32, %s: f32, %b: f32, %acc: f32):
      %c = arith.subf %a, %m : f32
      %n = arith.mulf %c, %s : f32
      %p = arith.mulf %n, %b : f32
      %t = arith.addf %acc, %p fastmath<reassoc> : f32
      linalg.yield %t : f32
    } -> tensor<2x3x5xf32>
    return %r : tensor<2x3x5xf32>
  }

  // A weight gradient x^T @ f(g): only the second factor was fused; it is computed over the
  // loops it reads, in its input's order (rows, outputs).
  // CHECK-LABEL: func.func @test_transposed_input_and_fused_gradient
  // CHECK:         %[[T:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<6x5xf32>) outs(%{{.*}} : tensor<6x5xf32>)
  // CHECK:           math.tanh
  // CHECK:         linalg.generic {{.*}} ins(%arg0, %[[T]] : tensor<6x4xf32>, tensor<6x5xf32>)
  // CHECK-NEXT:    ^bb0
  // CHECK-NEXT:      arith.mulf
  // CHECK-NEXT:      arith.addf
  // GEMM-LABEL: func.func @{{.*}}test_transposed_input_and_fused_gradient
  // GEMM: call @mlax_sgemm
  func.func @test_transposed_input_and_fused_gradient(%x: tensor<6x4xf32>, %g: tensor<6x5xf32>,
                                                      %init: tensor<4x5xf32>) -> tensor<4x5xf32> {
    %r = linalg.generic {indexing_maps = [#xt, #g, #o2], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %g : tensor<6x4xf32>, tensor<6x5xf32>) outs(%init : tensor<4x5xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %t = math.tanh %b : f32
      %p = arith.mulf %a, %t : f32
      %s = arith.addf %p, %acc : f32
      linalg.yield %s : f32
    } -> tensor<4x5xf32>
    return %r : tensor<4x5xf32>
  }

  // Left alone: a product with a value from outside the op (a scalar: nothing to make a gemm
  // of), a reduction of a product whose factors read every loop (fusion is the win), a
  // widening of half inputs (what mlax-gpu-matmul reads), and a plain contraction.
  // CHECK-LABEL: func.func @test_outside_scalar
  // CHECK:         linalg.generic
  // CHECK-NEXT:    ^bb0
  // CHECK-NEXT:      math.exp
  // CHECK-NEXT:      arith.mulf
  // CHECK-NEXT:      arith.addf
  func.func @test_outside_scalar(%a: tensor<4x6xf32>, %init: tensor<4xf32>, %c: f32) -> tensor<4xf32> {
    %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                         iterator_types = ["parallel", "reduction"]}
        ins(%a : tensor<4x6xf32>) outs(%init : tensor<4xf32>) {
    ^bb0(%u: f32, %acc: f32):
      %e = math.exp %u : f32
      %p = arith.mulf %c, %e : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }

  // CHECK-LABEL: func.func @test_left_alone
  // CHECK:         linalg.generic
  // CHECK:           math.exp
  // CHECK:         linalg.generic
  // CHECK:           arith.extf
  // CHECK:           arith.extf
  // CHECK:         linalg.generic
  // CHECK-NOT:     linalg.generic
  // CHECK:         return
  func.func @test_left_alone(%a: tensor<4x5x6xf32>, %b: tensor<4x5x6xf32>, %init: tensor<4x5xf32>,
                             %h: tensor<6x4xf16>, %k: tensor<6x5xf16>, %init2: tensor<4x5xf32>,
                             %x: tensor<6x4xf32>, %y: tensor<6x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) {
    %0 = linalg.generic {indexing_maps = [#all, #all, #red], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<4x5x6xf32>, tensor<4x5x6xf32>) outs(%init : tensor<4x5xf32>) {
    ^bb0(%u: f32, %v: f32, %acc: f32):
      %e = math.exp %u : f32
      %p = arith.mulf %e, %v : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<4x5xf32>
    %1 = linalg.generic {indexing_maps = [#xt, #g, #o2], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%h, %k : tensor<6x4xf16>, tensor<6x5xf16>) outs(%init2 : tensor<4x5xf32>) {
    ^bb0(%u: f16, %v: f16, %acc: f32):
      %wu = arith.extf %u : f16 to f32
      %wv = arith.extf %v : f16 to f32
      %p = arith.mulf %wu, %wv : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<4x5xf32>
    %2 = linalg.generic {indexing_maps = [#xt, #g, #o2], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %y : tensor<6x4xf32>, tensor<6x5xf32>) outs(%init2 : tensor<4x5xf32>) {
    ^bb0(%u: f32, %v: f32, %acc: f32):
      %p = arith.mulf %u, %v : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<4x5xf32>
    return %0, %1, %2 : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>
  }
}
