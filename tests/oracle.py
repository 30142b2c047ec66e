"""Checking mlax against JAX: random inputs, both eager and jitted, values and dtypes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import ml_dtypes
import numpy as np

import mlax

FLOAT_DTYPES = (np.float32, np.float16, ml_dtypes.bfloat16)
INT_DTYPES = (np.int8, np.int16, np.int32, np.uint8, np.uint32)
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + (np.bool_,)

# Relative tolerance by result dtype for transcendental functions (a few ulp).
RTOL = {np.dtype(np.float32): 2e-6, np.dtype(np.float16): 2e-3,
        np.dtype(ml_dtypes.bfloat16): 1.6e-2, np.dtype(np.float64): 1e-12}


def random_shape(rng: np.random.Generator, max_rank: int = 3, max_dim: int = 5) -> tuple[int, ...]:
    rank = int(rng.integers(0, max_rank + 1))
    return tuple(int(d) for d in rng.integers(1, max_dim + 1, size=rank))


def random_array(rng: np.random.Generator, shape: Sequence[int], dtype: Any,
                 low: float = -3.0, high: float = 3.0) -> np.ndarray:
    """Random values of ``dtype``: uniform floats in [low, high), full-range-ish integers."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -100), min(info.max, 100)
        return rng.integers(lo, hi + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def assert_same(actual: Any, expected: Any, rtol: float | None = None, atol: float = 0.0,
                check_weak_type: bool = True) -> None:
    """Same pytree structure; per leaf same shape, dtype (and weak type) and close values."""
    a_leaves, a_tree = jax.tree_util.tree_flatten(actual)
    e_leaves, e_tree = jax.tree_util.tree_flatten(expected)
    assert a_tree == e_tree, f"tree structure {a_tree} != {e_tree}"
    for a, e in zip(a_leaves, e_leaves, strict=True):
        a_np, e_np = np.asarray(a), np.asarray(e)
        assert a_np.shape == e_np.shape, f"shape {a_np.shape} != {e_np.shape}"
        assert a_np.dtype == e_np.dtype, f"dtype {a_np.dtype} != {e_np.dtype}"
        if check_weak_type and hasattr(e, "weak_type") and hasattr(a, "weak_type"):
            assert a.weak_type == e.weak_type, f"weak_type {a.weak_type} != {e.weak_type}"
        tol = RTOL.get(a_np.dtype, 0.0) if rtol is None else rtol
        if a_np.dtype.kind in "fc" or a_np.dtype == ml_dtypes.bfloat16:
            np.testing.assert_allclose(a_np.astype(np.float64), e_np.astype(np.float64),
                                       rtol=tol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(a_np, e_np)


def check_against_jax(mlax_fn: Callable[..., Any], jax_fn: Callable[..., Any], *args: Any,
                      rtol: float | None = None, atol: float = 0.0, jit: bool = True,
                      check_weak_type: bool = True) -> None:
    """Run ``mlax_fn`` eagerly (and under ``mlax.jit``) and ``jax_fn`` on the same ``args``."""
    expected = jax_fn(*args)
    assert_same(mlax_fn(*args), expected, rtol, atol, check_weak_type)
    if jit:
        assert_same(mlax.jit(mlax_fn)(*args), expected, rtol, atol, check_weak_type)
