"""Shared by the FFT tests: backends, random inputs of each dtype, and a comparison that checks
shape, dtype and close values of real and complex results alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import mlax

BACKENDS = ["eager", "cpu", "xla"]
DTYPES = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}
TOL = {np.dtype(np.float32): 2e-5, np.dtype(np.complex64): 2e-5,
       np.dtype(np.float64): 1e-12, np.dtype(np.complex128): 1e-12}


def run(fn: Callable[..., Any], backend: str, *args: Any) -> Any:
    return fn(*args) if backend == "eager" else mlax.jit(fn, backend=backend)(*args)


def random(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def same(actual: Any, expected: Any, tol: float | None = None) -> None:
    """Same shape and dtype; values within ``tol`` relative to the largest magnitude."""
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    assert a.dtype == e.dtype, f"dtype {a.dtype} != {e.dtype}"
    tol = TOL.get(e.dtype, 0.0) if tol is None else tol
    scale = max(1.0, float(np.abs(e).max())) if e.size else 1.0
    np.testing.assert_allclose(a.astype(np.complex128), e.astype(np.complex128), rtol=tol, atol=tol * scale)
