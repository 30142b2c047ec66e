"""Shared by the FFT tests: backends, dtypes, and a comparison that checks shape, dtype and close
values of real and complex results alike (random inputs and `run` are tests.oracle's)."""

from __future__ import annotations

from typing import Any

import numpy as np

BACKENDS = ["eager", "cpu", "xla"]
DTYPES = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}
TOL = {np.dtype(np.float32): 2e-5, np.dtype(np.complex64): 2e-5,
       np.dtype(np.float64): 1e-12, np.dtype(np.complex128): 1e-12}


def same(actual: Any, expected: Any, tol: float | None = None) -> None:
    """Same shape and dtype; values within ``tol`` relative to the largest magnitude."""
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    assert a.dtype == e.dtype, f"dtype {a.dtype} != {e.dtype}"
    tol = TOL.get(e.dtype, 0.0) if tol is None else tol
    scale = max(1.0, float(np.abs(e).max())) if e.size else 1.0
    np.testing.assert_allclose(a.astype(np.complex128), e.astype(np.complex128), rtol=tol, atol=tol * scale)
