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
        values = rng.random(shape) < 0.5
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -100), min(info.max, 100)
        values = rng.integers(lo, hi + 1, size=shape)
    else:
        values = rng.uniform(low, high, size=shape)
    # Always an ndarray: JAX treats NumPy scalars differently from rank-0 arrays.
    return np.asarray(values).astype(dtype)


def random_normal(rng: np.random.Generator, shape: Sequence[int], dtype: Any) -> np.ndarray:
    """Standard normal values of a float dtype, or of a complex one (both parts normal)."""
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return np.asarray(values).astype(dtype)


def run(fn: Callable[..., Any], backend: str, *args: Any) -> Any:
    """``fn(*args)`` eagerly (backend "eager": the interpreter) or under mlax.jit on ``backend``."""
    return fn(*args) if backend == "eager" else mlax.jit(fn, backend=backend)(*args)


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
            wide = np.complex128 if a_np.dtype.kind == "c" else np.float64  # both parts of complex values
            np.testing.assert_allclose(a_np.astype(wide), e_np.astype(wide), rtol=tol, atol=atol,
                                       equal_nan=True)
        else:
            np.testing.assert_array_equal(a_np, e_np)


def check_against_jax(mlax_fn: Callable[..., Any], jax_fn: Callable[..., Any], *args: Any,
                      rtol: float | None = None, atol: float = 0.0, jit: bool = True,
                      check_weak_type: bool = True) -> None:
    """Run ``mlax_fn`` eagerly (and under ``mlax.jit`` on the default backend and on XLA) and
    ``jax_fn`` on the same ``args``."""
    expected = jax_fn(*args)
    assert_same(mlax_fn(*args), expected, rtol, atol, check_weak_type)
    if jit:
        for backend in dict.fromkeys([mlax.config.backend, "xla"]):
            assert_same(mlax.jit(mlax_fn, backend=backend)(*args), expected, rtol, atol, check_weak_type)


# Rank 0, size 0 and size 1 dimensions besides the random shapes.
FIXED_SHAPES = ((), (0,), (3, 0, 2), (1, 1))

Case = tuple[np.ndarray, ...]


def _case_shape(case: Case) -> tuple[int, ...]:
    return np.broadcast_shapes(*(np.shape(a) for a in case))


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return x if isinstance(x, tuple) else (x,)


def check_cases(mlax_fn: Callable[..., Any], jax_fn: Callable[..., Any], cases: Sequence[Case],
                rtol: dict[np.dtype, float] | None = None, signbits: bool = False) -> None:
    """``mlax_fn`` eagerly and under mlax.jit against ``jax_fn`` on every argument tuple of ``cases``.

    ``jax_fn`` must act elementwise (results may add minor dimensions; a tuple of results is
    fine): jax sees each dtype signature once, with the cases' elements broadcast, flattened and
    concatenated, all inside one jax.jit, so a test costs one XLA compile instead of one per
    shape and dtype. ``signbits`` also compares the sign of zeros.
    """
    groups: dict[tuple[np.dtype, ...], list[int]] = {}
    for i, case in enumerate(cases):
        groups.setdefault(tuple(np.asarray(a).dtype for a in case), []).append(i)
    def flatten(members: list[int], k: int) -> np.ndarray:
        return np.concatenate([np.broadcast_to(cases[i][k], _case_shape(cases[i])).ravel() for i in members])

    flat = [tuple(flatten(members, k) for k in range(len(cases[members[0]]))) for members in groups.values()]
    outs = jax.jit(lambda groups: [_as_tuple(jax_fn(*group)) for group in groups])(flat)
    expected: dict[int, tuple[np.ndarray, ...]] = {}
    for members, group_outs in zip(groups.values(), outs, strict=True):
        group_outs, offset = [np.asarray(o) for o in group_outs], 0
        for i in members:
            shape = _case_shape(cases[i])
            size = int(np.prod(shape, dtype=np.int64))
            expected[i] = tuple(o[offset:offset + size].reshape(shape + o.shape[1:]) for o in group_outs)
            offset += size
    jitted = mlax.jit(mlax_fn)
    for i, case in enumerate(cases):
        for mode, fn in (("eager", mlax_fn), ("jit", jitted)):
            for got, want in zip(_as_tuple(fn(*case)), expected[i], strict=True):
                got = np.asarray(got)
                try:
                    assert_same(got, want, (rtol or {}).get(want.dtype))
                    if signbits:
                        zeros = want == 0
                        np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))
                except AssertionError as err:
                    inputs = [np.asarray(a) for a in case]
                    raise AssertionError(f"{mode}, case {i} {inputs}:\n{err}") from None
