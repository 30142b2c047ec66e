"""Row reductions on the GPU backend (`mlax-gpu-row-kernels`): how many kernels each program
becomes, that its reductions are block reductions (``gpu.all_reduce``: ``shfl.sync.bfly`` and
``bar.sync`` in the PTX) or warp butterflies, and, where a GPU is present, the same numbers as
the CPU backend. Kernels cannot run without a GPU: those tests skip."""

from __future__ import annotations

import re
from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.backends.gpu.conftest import needs_gpu
from tests.oracle import assert_same, random_array


def _layernorm(x):
    return (x - x.mean(-1, keepdims=True)) / mnp.sqrt(x.var(-1, keepdims=True) + 1e-5)


# name -> (function, shape, dtype, kernels at the gpu stage, how the rows are reduced)
PROGRAMS: dict[str, tuple[Callable, tuple[int, ...], object, int, str]] = {
    "softmax": (lambda x: mlax.nn.softmax(x, axis=-1), (16, 100), np.float32, 1, "block"),
    "log_softmax": (lambda x: mlax.nn.log_softmax(x, axis=-1), (16, 100), np.float32, 1, "block"),
    "layernorm": (_layernorm, (16, 100), np.float32, 1, "block"),
    "row_sum_max_min": (lambda x: (x.sum(1), x.max(1), x.min(1)), (37, 53), np.float32, 1, "block"),
    "rank3_last_two": (lambda x: x.sum(axis=(1, 2)), (4, 5, 6), np.float32, 1, "warp"),
    "rank3_last": (lambda x: x.max(axis=-1), (3, 7, 45), np.float32, 1, "block"),
    "short_rows": (lambda x: mlax.nn.log_softmax(x, axis=-1), (16, 10), np.float32, 1, "warp"),
    "odd_rows": (lambda x: x.max(axis=1), (5, 12), np.float32, 1, "warp"),
    "scalar_sum": (lambda x: x.sum(), (37, 53), np.float32, 1, "block"),
    "scalar_two_launches": (lambda x: (x * x).sum(), (300, 400), np.float32, 2, "block"),
    "normalized_by_total": (lambda x: x / x.sum(), (37, 53), np.float32, 1, "block"),
    "f16_max": (lambda x: x.max(axis=-1), (9, 70), np.float16, 1, "block"),
    "bf16_sum": (lambda x: x.sum(axis=-1), (9, 70), ml_dtypes.bfloat16, 1, "block"),
    "int32_reductions": (lambda x: (x.sum(1), x.max(1), x.min(1), x.prod(1)), (6, 40), np.int32, 1, "block"),
    "int8_max": (lambda x: x.max(axis=-1), (6, 40), np.int8, 1, "block"),
    "bool_any_all": (lambda x: (x.any(axis=-1), x.all(axis=-1)), (6, 40), np.bool_, 1, "block"),
}


def _lowered(name: str, rng: np.random.Generator):
    f, shape, dtype, _, _ = PROGRAMS[name]
    x = random_array(rng, shape, dtype)
    return f, x, mlax.jit(f, backend="gpu").lower(x)


def _ptx(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r'assembly = "((?:[^"\\]|\\.)*)"', text)]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_rows_are_one_kernel_with_block_reductions(name: str, rng: np.random.Generator) -> None:
    _, _, lowered = _lowered(name, rng)
    _, _, _, kernels, how = PROGRAMS[name]
    text = lowered.as_text("gpu", debug_info=False)
    assert text.count("gpu.module @") == kernels, text
    if how == "block":
        assert "gpu.all_reduce" in text
    else:
        assert "gpu.shuffle  xor" in text and "gpu.all_reduce" not in text
    ptx = "".join(_ptx(lowered.as_text("binary", debug_info=False)))
    assert "shfl.sync.bfly" in ptx
    assert ("bar.sync" in ptx) == (how == "block")


def test_softmax_was_six_kernels_and_is_one(rng: np.random.Generator) -> None:
    """The softmax's kernel: one block of 128 threads per row; rows of 4096 get 256 threads."""
    for shape, threads in (((16, 100), 128), ((8, 4096), 256)):
        text = mlax.jit(lambda x: mlax.nn.softmax(x, axis=-1), backend="gpu").lower(
            random_array(rng, shape, np.float32)).as_text("gpu", debug_info=False)
        assert f"blocks in (%c{shape[0]}, %c1, %c1) threads in (%c{threads}, %c1, %c1)" in text
        assert text.count("gpu.all_reduce  maximumf") == 1 and text.count("gpu.all_reduce  add") == 1


def test_max_keeps_the_cpu_nan_semantics(rng: np.random.Generator) -> None:
    """jnp.max propagates NaN (arith.maximumf, all_reduce maximumf, max.NaN.f32 in PTX)."""
    lowered = mlax.jit(lambda x: x.max(axis=1), backend="gpu").lower(random_array(rng, (8, 50), np.float32))
    assert "gpu.all_reduce  maximumf" in lowered.as_text("gpu", debug_info=False)
    assert "max.NaN.f32" in "".join(_ptx(lowered.as_text("binary", debug_info=False)))


def test_column_reductions_keep_a_thread_per_column(rng: np.random.Generator) -> None:
    text = mlax.jit(lambda x: x.sum(axis=0), backend="gpu").lower(
        random_array(rng, (37, 53), np.float32)).as_text("gpu", debug_info=False)
    assert "gpu.all_reduce" not in text and text.count("gpu.module @") == 2


@needs_gpu
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_row_kernels_agree_with_the_cpu_backend(name: str, rng: np.random.Generator) -> None:
    f, x, _ = _lowered(name, rng)
    tolerance = 1e-2 if np.dtype(x.dtype).itemsize == 2 else 2e-5
    assert_same(mlax.jit(f, backend="gpu")(x), mlax.jit(f, backend="cpu")(x), rtol=tolerance, atol=1e-5)


@needs_gpu
def test_nan_rows_agree_with_the_cpu_backend(rng: np.random.Generator) -> None:
    x = random_array(rng, (37, 53), np.float32)
    x[3, 7] = x[20, 52] = np.nan
    f = lambda x: (x.max(axis=1), x.min(axis=1), mnp.nanmax(x, axis=1), x.sum(), mlax.nn.softmax(x))  # noqa: E731
    assert_same(mlax.jit(f, backend="gpu")(x), mlax.jit(f, backend="cpu")(x), rtol=2e-5, atol=1e-6)
