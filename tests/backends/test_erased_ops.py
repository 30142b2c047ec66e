"""No pass touches an op it erased.

The Python bindings do not invalidate the other handles of an erased op, so a pass that walks
a snapshot of ops and meets one that a rewrite erased (an erased op's body, a load forwarded
away, a loop rebuilt) reads freed memory: a crash about once in twenty runs under load. Here
each case runs `mlax-opt` under glibc's freed-memory filling (MALLOC_PERTURB_, per-thread
cache off), where such a read crashes every time; each failed before its fix. lit-tests/lit.cfg.py
sets the same environment, so every lit test is this check too.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                                reason="MALLOC_PERTURB_ and GLIBC_TUNABLES are glibc's")

# A shared zero fill overwritten by two matmuls: each gets its own and the shared one goes,
# with its body (mlax-private-fills walked every op, so it visited the freed body next).
PRIVATE_FILLS = """
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x4xf32>) -> tensor<2x4xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>)
                     outs(%init : tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>)
                     outs(%init : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}
"""

# An elementwise nest (mlax-gpu-vectorize rebuilds it and erases the old one with its body)
# followed by another: the old pass walked every host op and visited the freed body.
VECTORIZE = """
func.func @f(%x: memref<8x64xf32>, %y: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%j, %i) = (%c0, %c0) to (%c64, %c8) step (%c1, %c1) {
    %0 = memref.load %x[%i, %j] : memref<8x64xf32>
    %1 = arith.mulf %0, %0 : f32
    memref.store %1, %y[%i, %j] : memref<8x64xf32>
    scf.reduce
  }
  scf.parallel (%j, %i) = (%c0, %c0) to (%c64, %c8) step (%c1, %c1) {
    %0 = memref.load %y[%i, %j] : memref<8x64xf32>
    memref.store %0, %x[%i, %j] : memref<8x64xf32>
    scf.reduce
  }
  return
}
"""

# mlax-gpu-coalesce moves a nest's body into a rebuilt loop and erases the old loop with its
# terminator, which the old pass visited next.
COALESCE = """
func.func @f(%x: memref<4x16xf32>, %y: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
    %0 = memref.load %x[%i, %j] : memref<4x16xf32>
    memref.store %0, %y[%i, %j] : memref<4x16xf32>
    scf.reduce
  }
  return
}
"""

# Deallocation bookkeeping (a host array of ownership bits): mlax-gpu-host-reads gives each
# load the value last stored and erases it; the old pass then visited the erased loads.
HOST_READS = """
func.func @f(%owned: i1) -> i1 {
  %c0 = arith.constant 0 : index
  %bits = memref.alloc() : memref<2xi1>
  memref.store %owned, %bits[%c0] : memref<2xi1>
  %0 = memref.load %bits[%c0] : memref<2xi1>
  %1 = memref.load %bits[%c0] : memref<2xi1>
  memref.dealloc %bits : memref<2xi1>
  %2 = arith.andi %0, %1 : i1
  return %2 : i1
}
"""

# An f16 product as the linalg stage leaves it on buffers: widening kernels, a zero fill, the
# matmul, a rounding kernel. mlax-gpu-matmul reads and writes the halves itself and erases the
# other kernels; before a98f151 it then analysed the erased rounding kernel (CI's segfault).
MATMUL = """
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%a: memref<80x96xf16>, %b: memref<72x80xf16>, %c: memref<96x72xf16>) {
  %zero = arith.constant 0.000000e+00 : f32
  %wa = memref.alloc() : memref<80x96xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<80x96xf16>) outs(%wa : memref<80x96xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %wb = memref.alloc() : memref<72x80xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<72x80xf16>) outs(%wb : memref<72x80xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %wc = memref.alloc() : memref<96x72xf32>
  linalg.fill ins(%zero : f32) outs(%wc : memref<96x72xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>,
                                 affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%wa, %wb : memref<80x96xf32>, memref<72x80xf32>) outs(%wc : memref<96x72xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%wc : memref<96x72xf32>) outs(%c : memref<96x72xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  }
  memref.dealloc %wa : memref<80x96xf32>
  memref.dealloc %wb : memref<72x80xf32>
  memref.dealloc %wc : memref<96x72xf32>
  return
}
"""

CASES = {
    "mlax-private-fills": PRIVATE_FILLS,
    "mlax-gpu-vectorize": VECTORIZE,
    "mlax-gpu-coalesce": COALESCE,
    "mlax-gpu-host-reads": HOST_READS,
    "mlax-gpu-matmul": MATMUL,
}


def _guarded_opt(flag: str, text: str) -> subprocess.CompletedProcess:
    """``mlax-opt --flag`` on ``text`` with freed memory filled on every free."""
    tunables = ":".join(t for t in (os.environ.get("GLIBC_TUNABLES"), "glibc.malloc.tcache_count=0") if t)
    env = {**os.environ, "MALLOC_PERTURB_": "165", "GLIBC_TUNABLES": tunables, "PYTHONFAULTHANDLER": "1"}
    return subprocess.run([sys.executable, "-m", "mlax.tools.mlax_opt", f"--{flag}"], input=text,
                          capture_output=True, text=True, env=env, timeout=300, check=False)


@pytest.mark.parametrize("flag", sorted(CASES))
def test_pass_touches_no_erased_op(flag: str) -> None:
    result = _guarded_opt(flag, CASES[flag])
    assert result.returncode == 0, f"{flag} crashed or failed:\n{result.stderr[-3000:]}"
    assert "func.func @f" in result.stdout
