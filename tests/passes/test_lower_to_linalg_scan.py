"""mlax-lower-to-linalg on argmax/argmin and the cumulative ops: the lowered IR, executed,
agrees bit for bit with the interpreter (ties, NaN, signed zeros, wrapping, reverse)."""

from __future__ import annotations

import numpy as np
import pytest

from mlax.dialect import dtypes
from tests.passes.test_lower_to_linalg import _floats, _ints, check

FLOATS = [np.float32, np.float64, np.float16, dtypes.bfloat16]
ALL = [*FLOATS, np.int32, np.int8]
_POOL = np.array([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan])


def _tied(rng: np.random.Generator, dtype: type, shape: tuple[int, ...], nan: float = 0.05) -> np.ndarray:
    """Values from a small pool, so that rows repeat their extremes (+-0, +-inf, NaN for floats;
    bool; -3..3 with INT_MIN/INT_MAX for integers)."""
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if np.dtype(dtype).kind == "i":
        x = _ints(rng, dtype, shape)
        return np.where(rng.random(shape) < 0.7, rng.integers(-3, 4, size=shape), x).astype(dtype)
    weights = np.full(len(_POOL), (1 - nan) / (len(_POOL) - 1))
    weights[-1] = nan  # _POOL ends with NaN
    return rng.choice(_POOL, size=shape, p=weights).astype(dtype)


def _arg(kind: str, x: np.ndarray, axis: int, index_dtype: type = np.int32) -> None:
    attrs = f"{{axis = {axis} : i64, index_dtype = {dtypes.mlir_name(np.dtype(index_dtype))}}}"
    check(f"arg{kind}", [x], attrs=attrs, result=(x.shape[:axis] + x.shape[axis + 1:], index_dtype))


# A float cumsum rounds once per element in the reference (f64 accumulation) and at every step
# on the CPU: they agree to a few ulp, not bit for bit.
_SUM_RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float16): 4e-3, np.dtype(dtypes.bfloat16): 3e-2}


def _cum(kind: str, x: np.ndarray, axis: int, reverse: int) -> None:
    rtol = _SUM_RTOL.get(x.dtype, 0.0) if kind == "sum" else 0.0
    check(f"cum{kind}", [x], attrs=f"{{axis = {axis} : i64, reverse = {reverse} : i64}}", rtol=rtol)


@pytest.mark.parametrize("dtype", [*ALL, np.bool_])
@pytest.mark.parametrize("kind", ["max", "min"])
def test_arg_dtypes(kind: str, dtype: type, rng: np.random.Generator) -> None:
    _arg(kind, _tied(rng, dtype, (6, 9), nan=0.03), axis=1)


@pytest.mark.parametrize(("shape", "axis", "index_dtype"), [
    ((5,), 0, np.int32),  # rank-0 result
    ((4, 3, 2), 0, np.int64),
    ((2, 0, 3), 2, np.int32),  # empty result
    ((3, 1), 1, np.int8),  # a single candidate
    ((2, 200), 1, np.int8),  # indices past 127 wrap
])
@pytest.mark.parametrize("kind", ["max", "min"])
def test_arg_shapes(kind: str, shape: tuple, axis: int, index_dtype: type, rng: np.random.Generator) -> None:
    _arg(kind, _tied(rng, np.float32, shape), axis, index_dtype)


def test_arg_nan_and_zeros() -> None:
    """The first NaN wins over everything; -0.0 and +0.0 tie (the first one wins)."""
    x = np.array([[1.0, np.nan, 3.0, np.nan], [-0.0, 0.0, -1.0, -0.0], [0.0, -0.0, 1.0, 1.0],
                  [-np.inf, -np.inf, -np.inf, -np.inf], [np.inf, np.nan, np.inf, -np.inf]], np.float32)
    for kind in ("max", "min"):
        _arg(kind, x, axis=1)


def _random(rng: np.random.Generator, dtype: type, shape: tuple[int, ...]) -> np.ndarray:
    """Finite random values with a few NaN/inf/-0 (cumsum/cumprod round at every step)."""
    if np.dtype(dtype).kind == "i":
        return _ints(rng, dtype, shape)
    x = rng.normal(scale=2.0, size=shape).astype(dtype)
    special = _floats(rng, dtype, (12,))
    for value in special[rng.permutation(12)[:3]] if x.size else []:
        x[tuple(rng.integers(0, n) for n in shape)] = value
    return x


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("kind", ["sum", "prod", "max", "min"])
def test_cumulative_dtypes(kind: str, dtype: type, rng: np.random.Generator) -> None:
    x = (_tied if kind in ("max", "min") else _random)(rng, dtype, (4, 11))
    _cum(kind, x, axis=1, reverse=int(np.dtype(dtype).itemsize == 4))


@pytest.mark.parametrize(("shape", "axis"), [((5,), 0), ((3, 4, 2), 1), ((6, 3), 0), ((2, 0, 3), 0),
                                              ((1, 3), 0), ((3, 1), 1)])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize(("kind", "dtype"), [("sum", np.float32), ("max", np.int8)])
def test_cumulative_shapes(kind: str, dtype: type, shape: tuple, axis: int, reverse: int,
                           rng: np.random.Generator) -> None:
    _cum(kind, _random(rng, dtype, shape), axis, reverse)


def test_cumulative_nan_and_zeros() -> None:
    """NaN propagates to every later max/min; -0.0 < +0.0; a -0.0 sum stays -0.0 (bit for bit:
    the values are exact)."""
    x = np.array([[-0.0, 0.0, -0.0, np.nan, 1.0], [0.0, -0.0, -0.0, -1.0, np.inf],
                  [-0.0, -0.0, np.inf, -np.inf, 2.0]], np.float32)
    for kind in ("sum", "prod", "max", "min"):
        for reverse in (0, 1):
            check(f"cum{kind}", [x], attrs=f"{{axis = 1 : i64, reverse = {reverse} : i64}}")


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32])
def test_unsigned(dtype: type, rng: np.random.Generator) -> None:
    """Unsigned order (the maximum beats 0 .. 2^(n-1)) and wrapping, into an unsigned index."""
    top = np.iinfo(dtype).max
    x = rng.choice(np.array([0, 1, 2, top // 2, top // 2 + 1, top - 1, top], dtype), size=(3, 8))
    for kind in ("max", "min"):
        _arg(kind, x, axis=1, index_dtype=np.uint16)
    for kind in ("sum", "prod", "max", "min"):
        _cum(kind, x, axis=0, reverse=1)
