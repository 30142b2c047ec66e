"""Vectorized elementwise kernels (mlax-gpu-vectorize) and noalias kernel arguments
(mlax-gpu-noalias) as the GPU backend's stages show them: which kernels move 16 bytes per
thread, which stay scalar (odd sizes, transposes), and what the PTX holds. Kernels cannot run
without a GPU: the tests that compare results with jax skip unless a CUDA driver is present."""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from mlir import ir
from mlir.execution_engine import ExecutionEngine

import mlax
import mlax.numpy as mnp
from mlax.backends.gpu.pipeline import GpuPipeline
from mlax.dialect import make_context
from mlax.passes.pipeline import run_pipeline
from tests.backends.gpu.conftest import needs_gpu
from tests.oracle import assert_same, random_array


class Api(NamedTuple):
    """What a program is written against: mlax's or jax's numpy, grad and vmap."""

    np: Any
    grad: Callable
    vmap: Callable


MLAX = Api(mnp, mlax.grad, mlax.vmap)
JAX = Api(jnp, jax.grad, jax.vmap)
F32, F16, BOOL, I32 = np.float32, np.float16, np.bool_, np.int32


def _tanh_loss(m: Api) -> Callable:
    return m.grad(lambda x: (m.np.tanh(x) * x).sum())


# name -> (program of an Api, argument (shape, dtype)s, the PTX's vector accesses: the
# instructions that must appear, or () for a kernel that stays scalar).
PROGRAMS: dict[str, tuple[Callable[[Api], Callable], tuple, tuple[str, ...]]] = {
    "chain_broadcasts": (lambda m: lambda x, b, c: m.np.tanh(x * b[None, :] + c[:, None]),
                         (((8, 64), F32), ((64,), F32), ((8,), F32)),
                         ("ld.global.nc.v4.b32", "st.global.v4.b32")),
    "exp_sqrt": (lambda m: lambda x, y: m.np.exp(-x) - m.np.sqrt(m.np.abs(y)),
                 (((37, 128), F32), ((37, 128), F32)), ("ld.global.nc.v4.b32", "st.global.v4.b32")),
    "halves": (lambda m: lambda x, y: x * y + x, (((4, 64), F16), ((4, 64), F16)),
               ("ld.global.nc.v4.b32", "st.global.v4.b32")),
    "to_f16": (lambda m: lambda x: (x * 2).astype(m.np.float16), (((16, 64), F32),),
               ("ld.global.nc.v4.b32", "st.global.v2.b32")),
    "to_bf16": (lambda m: lambda x: (x - 1).astype(m.np.bfloat16), (((16, 64), F32),),
                ("ld.global.nc.v4.b32", "cvt.rn.bf16x2.f32", "st.global.v2.b32")),
    "int_to_float": (lambda m: lambda i: (i * 3 + 1).astype(m.np.float32), (((8, 32), I32),),
                     ("ld.global.nc.v4.b32", "st.global.v4.b32")),
    "bools": (lambda m: lambda p, q: m.np.logical_and(p, m.np.logical_not(q)),
              (((4, 64), BOOL), ((4, 64), BOOL)), ("ld.global.nc.v4.b32", "st.global.v4.b32")),
    "compare": (lambda m: lambda x, y: x < y, (((5, 40), F32), ((5, 40), F32)),
                ("ld.global.nc.v4.b32", "st.global.b32")),
    "select": (lambda m: lambda p, x, y: m.np.where(p, x, y),
               (((6, 32), BOOL), ((6, 32), F32), ((6, 32), F32)),
               ("ld.global.nc.b32", "ld.global.nc.v4.b32", "st.global.v4.b32")),
    "two_lanes": (lambda m: lambda x: x * x, (((8, 6), F32),), ("ld.global.nc.v2.b32", "st.global.v2.b32")),
    "grad": (_tanh_loss, (((8, 64), F32),), ("ld.global.nc.v4.b32", "st.global.v4.b32")),
    "vmap": (lambda m: m.vmap(lambda a, b: a * b + 1.5), (((8, 64), F32), ((8, 64), F32)),
             ("ld.global.nc.v4.b32", "st.global.v4.b32")),
    "odd_size": (lambda m: lambda x, y: x * y + 1, (((37, 53), F32), ((37, 53), F32)), ()),
    "transpose": (lambda m: lambda x: m.np.transpose(x) * 2, (((8, 64), F32),), ()),
    "transpose_broadcast": (lambda m: lambda x, b: m.np.transpose(x, (1, 0)) * b[:, None],
                            (((7, 300), F32), ((300,), F32)), ()),
}


def _arguments(rng: np.random.Generator, specs: tuple) -> list[np.ndarray]:
    return [random_array(rng, shape, dtype) for shape, dtype in specs]


def _lowered(name: str, arguments: list[np.ndarray]) -> Any:
    return mlax.jit(PROGRAMS[name][0](MLAX), backend="gpu").lower(*arguments)


def _ptx(binary_stage: str) -> list[str]:
    """The PTX of each gpu.binary of a ``binary`` stage, one instruction per line."""
    return [m.group(1).replace("\\0A", "\n").replace("\\09", " ")
            for m in re.finditer(r'assembly = "((?:[^"\\]|\\.)*)"', binary_stage)]


def test_the_passes_run_in_the_gpu_stage() -> None:
    """Vectorized on the parallel nests before tiling (x then walks vectors); noalias once
    kernels are outlined and the host's buffers are device allocations."""
    passes = [p.strip() for p in re.split(r",\s*(?![^{]*})", dict(GpuPipeline().stages)["gpu"])]
    names = [p.split("(", 1)[-1] for p in passes]
    assert names.index("mlax-gpu-coalesce") < names.index("mlax-gpu-vectorize") < \
        next(i for i, p in enumerate(names) if p.startswith("scf-parallel-loop-tiling"))
    assert names.index("mlax-widen-bool-buffers") < names.index("mlax-gpu-vectorize")
    assert names.index("mlax-gpu-device-buffers") < names.index("mlax-gpu-noalias")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_vector_accesses_in_the_ptx(name: str, rng: np.random.Generator) -> None:
    expected = PROGRAMS[name][2]
    lowered = _lowered(name, _arguments(rng, PROGRAMS[name][1]))
    kernels = lowered.as_text("gpu", debug_info=False)
    ptx = "\n".join(_ptx(lowered.as_text("binary", debug_info=False)))
    if expected:
        assert re.search(r"vector\.load .*\{alignment = (8|16) : i64\}", kernels)
        for instruction in expected:
            assert instruction in ptx, instruction
        assert "ld.global.nc.b8" not in ptx  # bytes are loaded as words
    else:
        assert "vector." not in kernels
        assert not re.search(r"\.v[248]\.", ptx)
        assert "st.global.b32" in ptx
    # Every input is a distinct, read-only argument: loads go through the non-coherent cache.
    assert "ld.global.nc" in ptx


@pytest.mark.parametrize("inner", [4, 6, 7, 12, 30, 33, 64, 100])
def test_lanes_follow_the_inner_size(inner: int, rng: np.random.Generator) -> None:
    """4 f32 lanes (16 bytes) where they divide the contiguous size, else 2, else scalar."""
    rows = int(rng.integers(1, 9))
    x = random_array(rng, (rows, inner), np.float32)
    text = mlax.jit(lambda x: mnp.sin(x) * x + 1, backend="gpu").lower(x).as_text("gpu", debug_info=False)
    lanes = 4 if inner % 4 == 0 else 2 if inner % 2 == 0 else None
    if lanes is None:
        assert "vector." not in text
    else:
        assert f"vector<{lanes}xf32>" in text and f"alignment = {4 * lanes} : i64" in text
        assert f"vector<{2 * lanes}xf32>" not in text


def test_f64_moves_two_per_thread(x64: None, rng: np.random.Generator) -> None:
    x, y = (random_array(rng, (8, 32), np.float64) for _ in range(2))
    lowered = mlax.jit(lambda x, y: x * y + 1, backend="gpu").lower(x, y)
    ptx = "\n".join(_ptx(lowered.as_text("binary")))
    assert "ld.global.nc.v2.b64" in ptx and "st.global.v2.b64" in ptx
    expected = jax.jit(lambda x, y: x * y + 1)(x, y)
    results, loops = _run_vectorized_loops_on_the_host(lowered, [x, y], [np.asarray(expected)])
    assert "vector<2xf64>" in loops
    assert_same(results[0], np.asarray(expected))


def test_reduction_accumulator_stays_in_a_register(rng: np.random.Generator) -> None:
    """With noalias arguments the column sum's loop keeps its accumulator in a register: one
    store after the loop, none in it (before, every step stored it back)."""
    x = random_array(rng, (64, 32), np.float32)
    lowered = mlax.jit(lambda x: x.sum(axis=0), backend="gpu").lower(x)
    assert re.search(r"memref<64x32xf32> \{llvm.noalias, llvm.readonly\}, %arg\d+: memref<32xf32> "
                     r"\{llvm.noalias\}", lowered.as_text("gpu", debug_info=False))
    loop_kernel = next(text for text in _ptx(lowered.as_text("binary")) if "ld.global.nc" in text)
    _, body, after = re.split(r"\$L__BB0_1:|bra\s+\$L__BB0_1;", loop_kernel)
    assert "ld.global.nc.b32" in body and "st.global" not in body
    assert after.count("st.global.b32") == 1


# The gpu stage's passes that build gpu.launch ops (they cannot run on the host), and the host
# lowering of the loop nests that remain.
_LAUNCHING = ("mlax-gpu-matmul", "mlax-gpu-row-kernels")
_HOST = ("convert-scf-to-cf, convert-vector-to-llvm, expand-strided-metadata, finalize-memref-to-llvm, "
         "convert-math-to-llvm, convert-arith-to-llvm, convert-index-to-llvm, convert-cf-to-llvm, "
         "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1}, reconcile-unrealized-casts")


def _run_vectorized_loops_on_the_host(lowered: Any, arguments: list[np.ndarray],
                                      results: list[np.ndarray]) -> tuple[list[np.ndarray], str]:
    """The ``gpu`` stage up to mlax-gpu-vectorize, its scf.parallel nests then compiled for this
    CPU and run (each iteration of a nest is what one GPU thread does): the vectorized code's
    results, and the IR that made them."""
    before = dict(GpuPipeline().stages)["gpu"].split(", mlax-gpu-vectorize")[0].split(", ")
    with make_context():
        module = ir.Module.parse(lowered.as_text("buffers", debug_info=False))
        run_pipeline(module.operation, ", ".join([p for p in before if p not in _LAUNCHING] +
                                                 ["mlax-gpu-vectorize"]))
        loops = str(module)
        entry = next(ir.StringAttr(op.attributes["sym_name"]).value for op in module.body.operations
                     if op.operation.name == "func.func" and "sym_visibility" not in op.attributes)
        run_pipeline(module.operation, _HOST)
        engine = ExecutionEngine(module, opt_level=2)
        buffers = [np.array(a) for a in arguments] + [np.zeros(r.shape, r.dtype) for r in results]
        pointers = [ctypes.c_void_p(b.ctypes.data) for b in buffers]  # bools are bytes, as in the kernels
        packed = (ctypes.c_void_p * len(buffers))(*[ctypes.addressof(p) for p in pointers])
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.raw_lookup(entry))(packed)  # the packed entry
    return buffers[len(arguments):], loops


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_vectorized_loops_agree_with_jax_on_the_host(name: str, rng: np.random.Generator) -> None:
    """What each thread computes, checked without a GPU: lanes, broadcasts, converts, bytes
    unpacked from words. Not checked here: the mapping to the grid, NVPTX, the device's alignment."""
    program, specs, vectorized = PROGRAMS[name]
    arguments = _arguments(rng, specs)
    # jax op by op, not jitted: each op rounds to its dtype, as a thread does; XLA's CPU fusion
    # would compute ``x * y + x`` in f16 with one rounding.
    expected = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(program(JAX)(*arguments))]
    results, loops = _run_vectorized_loops_on_the_host(_lowered(name, arguments), arguments, expected)
    assert ("vector.load" in loops) == bool(vectorized)
    assert_same(results, expected, atol=1e-6)


@needs_gpu
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_vectorized_programs_agree_with_jax(name: str, rng: np.random.Generator) -> None:
    program, specs, _ = PROGRAMS[name]
    arguments = _arguments(rng, specs)
    assert_same(mlax.jit(program(MLAX), backend="gpu")(*arguments), jax.jit(program(JAX))(*arguments),
                rtol=2e-5 if all(dtype != F16 for _, dtype in specs) else None, atol=1e-6)
