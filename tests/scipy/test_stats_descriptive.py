"""mlax.scipy.stats.mode, rankdata and sem against jax.scipy.stats: random integer and float
arrays with ties and NaNs, every axis and keyword jax supports, eagerly, and one row per
function in one jit per dtype; their edge cases and errors."""

from __future__ import annotations

from typing import Any

import jax
import jax.scipy.stats as jst
import numpy as np
import pytest

import mlax
import mlax.scipy.stats as mst
from tests.scipy.helpers import as_tuple, assert_close

METHODS = ("average", "min", "max", "dense", "ordinal")
# (function, keyword arguments)
ROWS = [("mode", {}), ("mode", {"axis": 1}), ("mode", {"axis": None}),
        ("mode", {"axis": -1, "keepdims": True}), ("mode", {"axis": None, "keepdims": True}),
        ("rankdata", {}), ("rankdata", {"axis": 0}),
        *[("rankdata", {"method": m, "axis": 1}) for m in METHODS],
        ("sem", {}), ("sem", {"axis": 1, "ddof": 0}), ("sem", {"axis": None}), ("sem", {"keepdims": True}),
        ("sem", {"axis": 1, "nan_policy": "omit"})]


def _inputs(rng: np.random.Generator, dt: Any) -> dict[str, np.ndarray]:
    ints = rng.integers(0, 4, (5, 7))
    floats = rng.integers(0, 5, (5, 7)).astype(dt) / 2
    floats[1, 2] = floats[1, 4] = floats[3, 0] = np.nan
    return {"ints": ints.astype(np.int32), "floats": floats}


# under mlax.jit one row per function (the code is the same for the others: compiles dominate)
JITTED = (1, 7, 13)


def _run(lib: Any, inputs: dict[str, Any], rows: Any = None) -> dict[tuple[int, str], Any]:
    return {(i, k): getattr(lib, ROWS[i][0])(v, **ROWS[i][1]) for i in rows or range(len(ROWS))
            for k, v in inputs.items()}


def _same(actual: Any, expected: Any, what: str) -> None:
    """Integers exactly, floats within 4 ulp (sem's std sums in another order)."""
    if np.issubdtype(np.asarray(expected).dtype, np.integer):
        a, e = np.asarray(actual), np.asarray(expected)
        assert (a.dtype, a.shape) == (e.dtype, e.shape) and np.array_equal(a, e), what
    else:
        assert_close(actual, expected, 4, 0.0, what)


def test_descriptive(dtype: Any, rng: np.random.Generator) -> None:
    inputs = _inputs(rng, dtype)
    expected = jax.jit(lambda ins: _run(jst, ins))(inputs)
    for results in (_run(mst, inputs), mlax.jit(lambda ins: _run(mst, ins, JITTED))(inputs)):
        for key, want in expected.items():
            if key not in results:
                continue
            for a, e in zip(as_tuple(results[key]), as_tuple(want), strict=True):
                _same(a, e, f"{ROWS[key[0]]} {key[1]}")


def test_edges_and_errors() -> None:
    for a in (np.zeros((0, 3), np.float32), np.float32(2.5), np.array([1, 2, 2, 1, 3])):
        for got, want in zip(mst.mode(a), jst.mode(a), strict=True):
            _same(got, want, f"mode {a!r}")
    assert_close(mst.rankdata(np.zeros(0, np.float32)), jst.rankdata(np.zeros(0, np.float32)), 0)
    for module in (mst, jst):
        with pytest.raises(ValueError, match="unknown method"):
            module.rankdata(np.ones(3), method="first")
        with pytest.raises(ValueError, match="nan_policy"):
            module.mode(np.ones(3), nan_policy="skip")
        with pytest.raises(NotImplementedError):
            module.rankdata(np.ones(3), nan_policy="omit")
        with pytest.raises(ValueError):
            module.sem(np.ones(3), nan_policy="raise")
    assert jax.numpy.asarray(mst.mode(np.ones(3)).count).dtype == jst.mode(np.ones(3)).count.dtype
