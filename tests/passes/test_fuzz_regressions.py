"""Bugs tools/diff_fuzz.py found, each pinned on every backend against jax."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import mlax


@pytest.mark.parametrize("backend", ["interpreter", "cpu", "xla"])
def test_uint64_extremes_lower_to_stablehlo(backend: str, x64: None) -> None:
    # ui64 constants past 2^63 (min's identity 2^64 - 1, an and-mask) were an internal
    # TypeError in mlax-lower-to-stablehlo: the binding takes an int64.
    x = np.array([3, 2, 2**64 - 1, 8], np.uint64)
    for f, reference in [(lambda a: mlax.lax.reduce_min(a, (0,)), lambda a: jax.lax.reduce_min(a, (0,))),
                         (lambda a: mlax.lax.cummin(a, 0), lambda a: jax.lax.cummin(a, 0)),
                         (lambda a: a & np.uint64(2**64 - 2), lambda a: a & np.uint64(2**64 - 2)),
                         (mlax.numpy.argmin, jax.numpy.argmin)]:
        np.testing.assert_array_equal(mlax.jit(f, backend=backend)(x), jax.jit(reference)(x))
