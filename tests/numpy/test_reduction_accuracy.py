"""Long reductions as accurate as jax's, against float64 ground truth, on every backend.

One accumulator adding 2^24 f32 values near 1e4 gave a mean of 9987.28 on the native CPU
backend (each addend rounds to the spacing of a running total near 1e11); the CPU backend
now sums in blocks (`mlax-split-reductions`, blocked cumsum) and the interpreter in f64.
Each check measures mlax's error and jax's on the same values and asks mlax's to be at most
a few times jax's (or a few ulp of the result, where jax is exact by luck).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jjnp
import jax.scipy.special as jsp
import ml_dtypes
import numpy as np
import pytest

import mlax.numpy as jnp
import mlax.scipy.special as msp
from tests.oracle import run

BACKENDS = ("eager", "cpu", "xla")


def _reductions(np_like: Any, special: Any) -> Callable[[Any], tuple[Any, ...]]:
    """Every reduction under test on one 1-D array, as one program (one compile per backend)."""

    def fn(x: Any) -> tuple[Any, ...]:
        columns = x.reshape(-1, 64)
        return (np_like.sum(x), np_like.mean(x), np_like.var(x), np_like.std(x),
                special.logsumexp(x - 1e4 if x.dtype == np.float32 else x),
                np_like.cumsum(x)[-1], np_like.cumsum(x)[x.size // 3],
                np_like.linalg.norm(x), np_like.dot(x, x[::-1]), np_like.sum(columns, axis=0)[:4])

    return fn


def _truth(x: np.ndarray) -> tuple[np.ndarray, ...]:
    w = x.astype(np.float64)
    columns = w.reshape(-1, 64)
    shifted = w - 1e4 if x.dtype == np.float32 else w
    top = shifted.max()
    return (w.sum(), w.mean(), w.var(), w.std(), top + np.log(np.exp(shifted - top).sum()),
            w.sum(), np.cumsum(w)[w.size // 3], np.sqrt((w * w).sum()), w @ w[::-1],
            columns.sum(0)[:4])


_NAMES = ("sum", "mean", "var", "std", "logsumexp", "cumsum[-1]", "cumsum[n/3]", "norm", "dot", "column sums")


def _ulp(value: np.ndarray, dtype: Any) -> np.ndarray:
    finfo = ml_dtypes.finfo(dtype)
    return np.maximum(np.abs(value) * float(finfo.eps), float(finfo.smallest_normal))


def _check(backend: str, x: np.ndarray) -> None:
    truth = _truth(x)
    ours = run(_reductions(jnp, msp), backend, x)
    theirs = jax.jit(_reductions(jjnp, jsp))(x)
    for name, want, got, reference in zip(_NAMES, truth, ours, theirs, strict=True):
        error = np.abs(np.asarray(got).astype(np.float64) - want).max()
        jax_error = np.abs(np.asarray(reference).astype(np.float64) - want).max()
        allowed = max(4 * jax_error, 8 * float(_ulp(np.abs(want), x.dtype).max()))
        assert error <= allowed, (f"{name} of {x.size} {x.dtype} values on {backend}: error {error:.3g}, "
                                  f"jax's {jax_error:.3g} (truth {want})")


def _values(n: int, dtype: Any, offset: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (offset + rng.standard_normal(n)).astype(dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("offset", [0.0, 1e4], ids=["centred", "offset"])
def test_f32_reductions_of_4m_values(backend: str, offset: float) -> None:
    _check(backend, _values(1 << 22, np.float32, offset, seed=22))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["f16", "bf16"])
def test_half_reductions_accumulate_in_f32(backend: str, dtype: Any) -> None:
    # Small values: a half sum of 2^18 values near 3 is about 8e5, beyond f16's range.
    x = _values(1 << 18, dtype, 0.0, seed=18) / 4
    truth = x.astype(np.float64).sum()
    for fn, jfn in ((jnp.sum, jjnp.sum), (jnp.mean, jjnp.mean)):
        got = np.asarray(run(fn, backend, x)).astype(np.float64)
        want = np.asarray(jax.jit(jfn)(x)).astype(np.float64)
        scale = truth if fn is jnp.sum else truth / x.size
        assert abs(got - scale) <= max(2 * abs(want - scale), float(_ulp(np.abs(scale), dtype)))


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("offset", [0.0, 1e4], ids=["centred", "offset"])
@pytest.mark.parametrize("log_size", [24, 26])
def test_f32_reductions_up_to_2_to_the_26(backend: str, offset: float, log_size: int) -> None:
    _check(backend, _values(1 << log_size, np.float32, offset, seed=log_size))


@pytest.mark.parametrize("backend", BACKENDS)
def test_column_sums_of_many_rows(backend: str) -> None:
    # The reduced dimension is the outer loop: one accumulator per column, no vector lanes.
    x = _values(1 << 20, np.float32, 1e4, seed=3).reshape(-1, 16)
    got = np.asarray(run(lambda a: jnp.sum(a, axis=0), backend, x)).astype(np.float64)
    truth = x.astype(np.float64).sum(0)
    jax_error = np.abs(np.asarray(jax.jit(lambda a: jjnp.sum(a, axis=0))(x)) - truth).max()
    assert np.abs(got - truth).max() <= max(4 * jax_error, 8 * float(_ulp(truth, np.float32).max()))
