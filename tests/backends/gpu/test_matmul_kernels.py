"""The matmul kernels of `mlax-gpu-matmul` (backends/gpu/matmul.py): what programs become at the
``gpu`` and ``binary`` stages, and a NumPy model of the kernels' index arithmetic (which thread
stages which element of which tile, which fragment element is which product element) checked
against ``numpy.matmul`` on edge sizes. The model calls the very functions that write the IR's
index computations (backends/gpu/matmul_kernels.py), so it checks the mapping without a GPU; the
fragment functions are checked against PTX's layout tables, written out here. Runs on a GPU
skip without a CUDA driver."""

from __future__ import annotations

import re
from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest

import mlax
from mlax.backends.gpu import matmul_kernels as k
from tests.backends.gpu.conftest import needs_gpu
from tests.oracle import assert_same, random_array

# ----- the fragment layouts against PTX's tables -----

# (kind, operand, lane) -> [(row, col) of each element], read off the PTX ISA's figures
# "Matrix fragments for mma.m16n8k8" (.tf32) and "... mma.m16n8k16 with floating point type".
PTX_TABLE = {
    ("tf32", "a", 0): [(0, 0), (8, 0), (0, 4), (8, 4)],
    ("tf32", "a", 6): [(1, 2), (9, 2), (1, 6), (9, 6)],
    ("tf32", "a", 31): [(7, 3), (15, 3), (7, 7), (15, 7)],
    ("tf32", "b", 6): [(2, 1), (6, 1)],
    ("tf32", "b", 31): [(3, 7), (7, 7)],
    ("f16", "a", 6): [(1, 4), (1, 5), (9, 4), (9, 5), (1, 12), (1, 13), (9, 12), (9, 13)],
    ("f16", "a", 31): [(7, 6), (7, 7), (15, 6), (15, 7), (7, 14), (7, 15), (15, 14), (15, 15)],
    ("f16", "b", 6): [(4, 1), (5, 1), (12, 1), (13, 1)],
    ("f16", "b", 31): [(6, 7), (7, 7), (14, 7), (15, 7)],
    ("any", "c", 6): [(1, 4), (1, 5), (9, 4), (9, 5)],
    ("any", "c", 31): [(7, 6), (7, 7), (15, 6), (15, 7)],
}


def _fragment(kind: str, operand: str, lane, i: int):
    if operand == "a":
        return k.mma_a(kind, lane, i)
    return k.mma_b(kind, lane, i) if operand == "b" else k.mma_c(lane, i)


@pytest.mark.parametrize("key", sorted(PTX_TABLE))
def test_fragments_follow_ptxs_tables(key: tuple[str, str, int]) -> None:
    kind, operand, lane = key
    assert [_fragment(kind, operand, lane, i) for i in range(len(PTX_TABLE[key]))] == PTX_TABLE[key]


@pytest.mark.parametrize("kind", ["tf32", "f16", "bf16"])
def test_fragments_cover_each_tile_once(kind: str) -> None:
    lanes = np.arange(32)
    n_a, n_b = k.fragment_sizes(kind)
    for operand, count, shape in (("a", n_a, (16, k.MMA_K[kind])), ("b", n_b, (k.MMA_K[kind], 8)),
                                  ("c", 4, (16, 8))):
        seen = np.zeros(shape, int)
        for i in range(count):
            np.add.at(seen, _fragment(kind, operand, lanes, i), 1)
        assert (seen == 1).all(), (operand, seen)


# ----- a NumPy model of the kernels, through the pass's own index functions -----

def _stage_tile(matrix: np.ndarray, origin: tuple[int, int], shape: tuple[int, int], threads: int,
                swapped: bool) -> np.ndarray:
    """The tile the block's threads load (every element once; zero outside ``matrix``)."""
    tile = np.full(shape, np.nan)
    thread = np.arange(threads)
    for step in range(k.loads_per_thread(shape, threads)):
        r, c = k.staged(thread, step, threads, shape, swapped)
        assert np.isnan(tile[r, c]).all(), "an element is staged twice"
        rows, cols = origin[0] + r, origin[1] + c
        inside = (rows < matrix.shape[0]) & (cols < matrix.shape[1])
        tile[r, c] = np.where(inside, matrix[np.minimum(rows, matrix.shape[0] - 1),
                                             np.minimum(cols, matrix.shape[1] - 1)], 0.0)
    assert not np.isnan(tile).any(), "an element is never staged"
    return tile


def _mma(kind: str, a_regs: np.ndarray, b_regs: np.ndarray, c_regs: np.ndarray) -> np.ndarray:
    """What one warp's mma.sync computes from its lanes' registers (PTX's layouts)."""
    lanes, kk = np.arange(32), k.MMA_K[kind]
    a, b, c = np.zeros((16, kk)), np.zeros((kk, 8)), np.zeros((16, 8))
    for i in range(a_regs.shape[1]):
        a[k.mma_a(kind, lanes, i)] = a_regs[:, i]
    for i in range(b_regs.shape[1]):
        b[k.mma_b(kind, lanes, i)] = b_regs[:, i]
    for i in range(4):
        c[k.mma_c(lanes, i)] = c_regs[:, i]
    d = a @ b + c
    return np.stack([d[k.mma_c(lanes, i)] for i in range(4)], axis=1)


def _mma_model(a: np.ndarray, b: np.ndarray, kind: str, swaps: tuple[bool, bool]) -> np.ndarray:
    (m, kdim), n = a.shape, b.shape[1]
    bm, bn, bk = k.MMA_TILE
    out = np.full((m, n), np.nan)
    lanes, n_a, n_b = np.arange(32), *k.fragment_sizes(kind)
    tiles = [(mt, nt) for mt in range(k.WARP_MMAS[0]) for nt in range(k.WARP_MMAS[1])]
    for by in range(-(-m // bm)):
        for bx in range(-(-n // bn)):
            acc = np.zeros((k.MMA_THREADS // 32, len(tiles), 32, 4))
            for k0 in range(0, kdim, bk):
                a_tile = _stage_tile(a, (by * bm, k0), (bm, bk), k.MMA_THREADS, swaps[0])
                b_tile = _stage_tile(b, (k0, bx * bn), (bk, bn), k.MMA_THREADS, swaps[1])
                for warp in range(k.MMA_THREADS // 32):
                    wr, wc = k.warp_origin(warp)
                    for kk in range(0, bk, k.MMA_K[kind]):
                        for t, (mt, nt) in enumerate(tiles):
                            a_at = [k.mma_a(kind, lanes, i) for i in range(n_a)]
                            b_at = [k.mma_b(kind, lanes, i) for i in range(n_b)]
                            a_regs = np.stack([a_tile[wr + 16 * mt + r, kk + c] for r, c in a_at], 1)
                            b_regs = np.stack([b_tile[kk + r, wc + 8 * nt + c] for r, c in b_at], 1)
                            acc[warp, t] = _mma(kind, a_regs, b_regs, acc[warp, t])
            for warp in range(k.MMA_THREADS // 32):
                wr, wc = k.warp_origin(warp)
                for t, (mt, nt) in enumerate(tiles):
                    for i in range(4):
                        rows = by * bm + wr + 16 * mt + k.mma_c(lanes, i)[0]
                        cols = bx * bn + wc + 8 * nt + k.mma_c(lanes, i)[1]
                        inside = (rows < m) & (cols < n)
                        assert np.isnan(out[rows[inside], cols[inside]]).all(), "an output is stored twice"
                        out[rows[inside], cols[inside]] = acc[warp, t, inside, i]
    return out


def _simt_model(a: np.ndarray, b: np.ndarray, swaps: tuple[bool, bool]) -> np.ndarray:
    (m, kdim), n = a.shape, b.shape[1]
    bm, bn, bk = k.SIMT_TILE
    out = np.full((m, n), np.nan)
    thread = np.arange(k.SIMT_THREADS)
    outputs = [(i, j) for i in range(k.SIMT_REGS) for j in range(k.SIMT_REGS)]
    for by in range(-(-m // bm)):
        for bx in range(-(-n // bn)):
            acc = np.zeros((len(outputs), k.SIMT_THREADS))
            for k0 in range(0, kdim, bk):
                a_tile = _stage_tile(a, (by * bm, k0), (bm, bk), k.SIMT_THREADS, swaps[0])
                b_tile = _stage_tile(b, (k0, bx * bn), (bk, bn), k.SIMT_THREADS, swaps[1])
                for o, (i, j) in enumerate(outputs):
                    r, c = k.simt_element(thread, i, j)
                    acc[o] += (a_tile[r, :] * b_tile[:, c].T).sum(axis=1)
            for o, (i, j) in enumerate(outputs):
                r, c = k.simt_element(thread, i, j)
                rows, cols = by * bm + r, bx * bn + c
                inside = (rows < m) & (cols < n)
                assert np.isnan(out[rows[inside], cols[inside]]).all()
                out[rows[inside], cols[inside]] = acc[o, inside]
    return out


SIZES = [(96, 80, 72), (37, 19, 70), (64, 64, 64), (130, 33, 9)]  # M, K, N: edges and exact tiles


@pytest.mark.parametrize("kind", ["tf32", "f16", "simt"])
@pytest.mark.parametrize("swaps", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("m, kdim, n", SIZES)
def test_numpy_model_of_the_kernels_is_matmul(kind: str, swaps: tuple[bool, bool], m: int, kdim: int, n: int,
                                              rng: np.random.Generator) -> None:
    a, b = rng.integers(-4, 5, (m, kdim)).astype(float), rng.integers(-4, 5, (kdim, n)).astype(float)
    model = _simt_model(a, b, swaps) if kind == "simt" else _mma_model(a, b, kind, swaps)
    np.testing.assert_array_equal(model, a @ b)


# ----- contractions of several dimensions: the pass's analysis and the operands' layouts -----

# (einsum spec, shapes): loop dimensions named by letters, the last operand the result.
CONTRACTIONS = [
    ("abk,kn->abn", [(4, 8, 16), (16, 32), (4, 8, 32)]),  # x @ w with x of rank 3
    ("abk,kcn->abcn", [(4, 3, 16), (16, 2, 5), (4, 3, 2, 5)]),  # rows and columns of two dimensions each
    ("zkm,znk->zmn", [(3, 7, 5), (3, 6, 7), (3, 5, 6)]),  # batched, both operands transposed
    ("xykm,yxnk->xymn", [(2, 3, 7, 5), (3, 2, 6, 7), (2, 3, 5, 6)]),  # two batch dimensions, permuted
]


def _generic(spec: str, shapes: list[tuple[int, ...]]) -> str:
    ins, out = spec.split("->")
    letters = sorted(set(spec) - {",", "-", ">"})
    dims = ", ".join(letters)
    maps = ", ".join(f"affine_map<({dims}) -> ({', '.join(term)})>" for term in [*ins.split(","), out])
    kinds = ", ".join('"reduction"' if x not in out else '"parallel"' for x in letters)
    types = [f"memref<{'x'.join(map(str, shape))}xf32>" for shape in shapes]
    return (f"func.func @f(%a: {types[0]}, %b: {types[1]}, %c: {types[2]}) {{\n"
            f"  linalg.generic {{indexing_maps = [{maps}], iterator_types = [{kinds}]}} "
            f"ins(%a, %b : {types[0]}, {types[1]}) outs(%c : {types[2]}) {{\n"
            "  ^bb0(%x: f32, %y: f32, %acc: f32):\n    %p = arith.mulf %x, %y : f32\n"
            "    %s = arith.addf %acc, %p : f32\n    linalg.yield %s : f32\n  }\n  return\n}\n")


@pytest.mark.parametrize("spec, shapes", CONTRACTIONS)
def test_contractions_read_as_batched_matrices(spec: str, shapes: list[tuple[int, ...]],
                                               rng: np.random.Generator) -> None:
    """`mlax-gpu-matmul`'s analysis of a generic contraction gives each operand's memref
    indices as functions of logical (batch, row, col) (`Operand.indices`); the batched matrix
    product of the operands read that way, stored that way, is the einsum."""
    from mlir import ir

    from mlax.backends.gpu.matmul import _analyse
    from mlax.dialect.context import make_context
    from mlax.passes.walk import nested_ops

    with make_context():
        module = ir.Module.parse(_generic(spec, shapes))
        found = _analyse(next(op for op in nested_ops(module.operation) if op.name == "linalg.generic"))
    assert found is not None
    a, b = (rng.integers(-4, 5, shape).astype(float) for shape in shapes[:2])
    e = found.extents
    operands = [k.Operand(name, "", "f32", dims) for name, dims in zip("abc", found.dims, strict=True)]

    def matrices(operand: k.Operand, array: np.ndarray, rows: int, cols: int) -> np.ndarray:
        at = np.meshgrid(np.arange(e["b"]), np.arange(rows), np.arange(cols), indexing="ij")
        return array[tuple(operand.indices(dict(zip("brc", at, strict=True))))]

    product = matrices(operands[0], a, e["m"], e["k"]) @ matrices(operands[1], b, e["k"], e["n"])
    c = np.full(shapes[2], np.nan)
    at = np.meshgrid(np.arange(e["b"]), np.arange(e["m"]), np.arange(e["n"]), indexing="ij")
    c[tuple(operands[2].indices(dict(zip("brc", at, strict=True))))] = product
    np.testing.assert_array_equal(c, np.einsum(spec, a, b))


# ----- programs through the pipeline -----

def _kernels(text: str) -> list[str]:
    return [m.group(1).replace("\\0A", "\n").replace("\\09", "\t")
            for m in re.finditer(r'assembly = "((?:[^"\\]|\\.)*)"', text)]


def _f32(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: random_array(rng, shape, np.float32)


def _typed(dtype, *shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    if np.issubdtype(dtype, np.integer):
        return lambda rng: rng.integers(-50, 50, shape).astype(dtype)
    return lambda rng: random_array(rng, shape, np.float32).astype(dtype)


def _matmul(a, b):
    return a @ b


# name -> (function, argument makers, the PTX mma instruction or None (the SIMT kernel))
PROGRAMS = {
    "f32_edges": (_matmul, (_f32(96, 80), _f32(80, 72)), "m16n8k8.row.col.f32.tf32.tf32.f32"),
    "f32_4096": (_matmul, (_f32(4096, 4096), _f32(4096, 4096)), "m16n8k8.row.col.f32.tf32.tf32.f32"),
    "batched": (_matmul, (_f32(3, 40, 72), _f32(3, 72, 50)), "m16n8k8.row.col.f32.tf32.tf32.f32"),
    "x_wT": (lambda x, w: x @ w.T, (_f32(33, 40), _f32(20, 40)), "m16n8k8.row.col.f32.tf32.tf32.f32"),
    "xT_w": (lambda x, w: x.T @ w, (_f32(40, 33), _f32(40, 20)), "m16n8k8.row.col.f32.tf32.tf32.f32"),
    "f16": (_matmul, (_typed(np.float16, 96, 80), _typed(np.float16, 80, 72)),
            "m16n8k16.row.col.f32.f16.f16.f32"),
    "bf16": (_matmul, (_typed(ml_dtypes.bfloat16, 96, 80), _typed(ml_dtypes.bfloat16, 80, 72)),
             "m16n8k16.row.col.f32.bf16.bf16.f32"),
    "x3d_w": (_matmul, (_f32(4, 24, 40), _f32(40, 72)), "m16n8k8.row.col.f32.tf32.tf32.f32"),
    "bf16_x3d_w": (_matmul, (_typed(ml_dtypes.bfloat16, 4, 24, 40), _typed(ml_dtypes.bfloat16, 40, 72)),
                   "m16n8k16.row.col.f32.bf16.bf16.f32"),
    "f64": (_matmul, (_typed(np.float64, 50, 30), _typed(np.float64, 30, 70)), None),
    "int32": (_matmul, (_typed(np.int32, 50, 30), _typed(np.int32, 30, 70)), None),
}


def _lowered(name: str, rng: np.random.Generator):
    f, makers, _ = PROGRAMS[name]
    arguments = [make(rng) for make in makers]
    with mlax.enable_x64(name == "f64"):
        return mlax.jit(f, backend="gpu").lower(*arguments)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_matmul_is_one_tiled_kernel(name: str, rng: np.random.Generator) -> None:
    _, _, mma = PROGRAMS[name]
    lowered = _lowered(name, rng)
    text = lowered.as_text("gpu", debug_info=False)
    assert text.count("gpu.module @") == 1  # no fill, widening or rounding kernel
    kernel = text[text.index("gpu.module @"):]
    assert "workgroup(" in kernel and "gpu.barrier" in kernel and "scf.for" in kernel
    assert ("nvvm.mma.sync" in kernel) == (mma is not None)
    ptx = _kernels(lowered.as_text("binary", debug_info=False))
    assert len(ptx) == 1
    assert "bar.sync" in ptx[0] and "ld.shared" in ptx[0] and "st.shared" in ptx[0]
    if mma is None:
        assert "mma.sync" not in ptx[0]
        assert ("fma.rn.f64" if name == "f64" else "mad.lo.s32") in ptx[0]
    else:
        assert f"mma.sync.aligned.{mma}" in ptx[0]


def test_grids_cover_the_output(rng: np.random.Generator) -> None:
    host = _lowered("f32_4096", rng).as_text("gpu", debug_info=False).split("gpu.module @", 1)[0]
    assert "blocks in (%c64, %c64, %c1) threads in (%c128, %c1, %c1)" in host
    host = _lowered("batched", rng).as_text("gpu", debug_info=False).split("gpu.module @", 1)[0]
    assert "blocks in (%c1, %c1, %c3) threads in (%c128, %c1, %c1)" in host


@needs_gpu
@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - {"f32_4096"}))
def test_matmuls_agree_with_the_cpu_backend(name: str, rng: np.random.Generator) -> None:
    f, makers, mma = PROGRAMS[name]
    arguments = [make(rng) for make in makers]
    # TF32 (jax's DEFAULT precision on GPUs) rounds each operand to 10 mantissa bits: an error
    # of at most 2 * 2^-11 * sum |a| |b| per result; halves round their result (1 ulp apart).
    bound = 2.0 ** -10 * float(np.max(f(*(np.abs(x.astype(np.float64)) for x in arguments))))
    rtol, atol = {"f16": (1e-2, 1e-3), "bf16": (2e-2, 1e-2)}.get(name, (0, bound) if mma else (1e-12, 0))
    with mlax.enable_x64(name == "f64"):
        assert_same(mlax.jit(f, backend="gpu")(*arguments), mlax.jit(f, backend="cpu")(*arguments),
                    rtol=rtol, atol=atol)
