"""Shared by the mlax.scipy tests: an ulp-style comparison, and a table of functions checked
against jax in one jit."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

import mlax


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


def as_tuple(x: Any) -> tuple[Any, ...]:
    return x if isinstance(x, tuple) else (x,)


def check_table(table: list[tuple[Any, ...]], ours: Callable[[str], Any], theirs: Callable[[str], Any],
                 dt: Any, jit: bool = True, eager_elements: int = 8) -> None:
    """Every row in one jax.jit and (``jit``) one mlax.jit, the first elements also eagerly;
    without ``jit``, all elements eagerly."""
    inputs = {row[0]: as_tuple(row[1](np.random.default_rng(zlib.crc32(row[0].encode())), dt))
              for row in table}
    expected = jax.jit(lambda ins: {k: theirs(k)(*v) for k, v in ins.items()})(inputs)
    if jit:
        actual = mlax.jit(lambda ins: {k: ours(k)(*v) for k, v in ins.items()})(inputs)
    errors = {}
    for name, _, ulps, floor in table:
        head = [np.asarray(v)[:eager_elements if jit else None] for v in inputs[name]]
        for a, e in zip(as_tuple(ours(name)(*head)), as_tuple(expected[name]), strict=True):
            assert_close(a, np.asarray(e)[:eager_elements if jit else None], ulps, floor, f"{name} eager")
        for a, e in zip(as_tuple(actual[name]) if jit else (), as_tuple(expected[name]), strict=False):
            errors[name] = max(errors.get(name, 0.0), ulp_error(a, e, floor))
    bad = {name: err for (name, _, ulps, _) in table if (err := errors.get(name, 0.0)) > ulps}
    assert not bad, f"beyond tolerance (ulp): {bad}"
