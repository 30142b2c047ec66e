"""Shared by the mlax.scipy tests: an ulp-style comparison."""

from __future__ import annotations

from typing import Any

import numpy as np


def ulp_error(actual: Any, expected: Any, floor: float) -> float:
    """The largest |actual - expected| in ulp of max(|expected|, floor), over finite expected
    values; inf where the NaN/inf patterns differ."""
    a, e = np.asarray(actual), np.asarray(expected)
    assert (a.shape, a.dtype) == (e.shape, e.dtype), ((a.shape, a.dtype), (e.shape, e.dtype))
    if not (np.array_equal(np.isnan(a), np.isnan(e)) and np.array_equal(a[np.isinf(e)], e[np.isinf(e)])):
        return np.inf
    finite = np.isfinite(e)
    if not finite.any():
        return 0.0
    info = np.finfo(e.dtype)
    scale = np.maximum(np.abs(e[finite]), max(floor, float(info.tiny)))
    return float(np.max(np.abs(a[finite].astype(np.float64) - e[finite]) / scale) / info.eps)


def assert_close(actual: Any, expected: Any, ulps: float, floor: float = 0.0, what: str = "") -> None:
    """Same dtype, shape and NaN/inf pattern; within ``ulps`` ulp of max(|expected|, floor)."""
    err = ulp_error(actual, expected, floor)
    assert err <= ulps, f"{what}: {err} ulp (allowed {ulps})"
