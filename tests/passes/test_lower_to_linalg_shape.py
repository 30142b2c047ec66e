"""mlax-lower-to-linalg on shape ops and reductions: the lowered IR, executed, agrees with the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from mlax.dialect import dtypes
from tests.passes.test_lower_to_linalg import _floats, _i64s, _ints, check

DTYPES = [np.float32, np.int32]


def _random(rng: np.random.Generator, dtype: type, shape: tuple[int, ...]) -> np.ndarray:
    return (_floats if dtype == np.float32 else _ints)(rng, dtype, shape)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "permutation"), [
    ((2, 3, 4), (2, 0, 1)), ((3, 4), (1, 0)), ((5,), (0,)), ((0, 3), (1, 0)), ((1, 2, 1), (1, 2, 0))])
def test_transpose(shape: tuple, permutation: tuple, dtype: type, rng: np.random.Generator) -> None:
    x = _random(rng, dtype, shape)
    out = tuple(shape[p] for p in permutation)
    check("transpose", [x], attrs=f"{{permutation = {_i64s(permutation)}}}", result=(out, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "new_shape"), [
    ((2, 3, 4), (6, 4)), ((6, 4), (2, 3, 4)), ((3, 4), (4, 3)), ((1,), ()), ((12,), (12,)),
    ((0, 3), (3, 0, 2)), ((2, 6), (12,)), ((2, 1, 3), (2, 3)), ((6,), (1, 2, 3, 1)), ((1, 4, 1), (4,)),
    ((4, 6), (2, 2, 6)), ((2, 3), (3, 2))])
def test_reshape(shape: tuple, new_shape: tuple, dtype: type, rng: np.random.Generator) -> None:
    check("reshape", [_random(rng, dtype, shape)], attrs=f"{{shape = {_i64s(new_shape)}}}",
          result=(new_shape, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "dims"), [
    ((3, 4), (0,)), ((3, 4), (0, 1)), ((2, 3, 4), (1, 2)), ((3, 4), ()), ((0, 3), (0, 1)), ((1,), (0,))])
def test_rev(shape: tuple, dims: tuple, dtype: type, rng: np.random.Generator) -> None:
    check("rev", [_random(rng, dtype, shape)], attrs=f"{{dimensions = {_i64s(dims)}}}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "start", "limit", "strides"), [
    ((5, 7), (1, 2), (4, 7), (1, 2)), ((9,), (0,), (9,), (3,)), ((9,), (2,), (8,), (4,)),
    ((4, 3), (2, 0), (2, 3), (1, 1)), ((0, 3), (0, 1), (0, 3), (1, 1)), ((6, 1), (5, 0), (6, 1), (2, 5)),
    ((2, 3), (0, 0), (1, 2), (1, 1)), ((1,), (0,), (0,), (3,))])
def test_slice(shape: tuple, start: tuple, limit: tuple, strides: tuple, dtype: type,
               rng: np.random.Generator) -> None:
    out = tuple(max(0, -(-(e - s) // k)) for s, e, k in zip(start, limit, strides, strict=True))
    attrs = (f"{{start_indices = {_i64s(start)}, limit_indices = {_i64s(limit)}, "
             f"strides = {_i64s(strides)}}}")
    check("slice", [_random(rng, dtype, shape)], attrs=attrs, result=(out, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("lhs", "rhs", "dimension"), [
    ((2, 3), (4, 3), 0), ((2, 3), (2, 5), 1), ((1,), (1,), 0), ((0, 3), (2, 3), 0), ((2, 0), (2, 0), 1)])
def test_concatenate(lhs: tuple, rhs: tuple, dimension: int, dtype: type, rng: np.random.Generator) -> None:
    out = tuple(a + b if d == dimension else a for d, (a, b) in enumerate(zip(lhs, rhs, strict=True)))
    check("concatenate", [_random(rng, dtype, lhs), _random(rng, dtype, rhs)],
          attrs=f"{{dimension = {dimension} : i64}}", result=(out, dtype))


REDUCTIONS = [((3, 4), (1,)), ((3, 4), (0, 1)), ((2, 3, 4), (0, 2)), ((3, 4), ()), ((0, 3), (0,)),
              ((3, 0), (1,)), ((1, 5), (0,))]


def _reduced(shape: tuple[int, ...], dims: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(n for d, n in enumerate(shape) if d not in dims)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, dtypes.bfloat16, np.int32, np.int8])
@pytest.mark.parametrize("kind", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize(("shape", "dims"), REDUCTIONS)
def test_reduce_numeric(kind: str, dtype: type, shape: tuple, dims: tuple, rng: np.random.Generator) -> None:
    """Float sums and products may accumulate in another order than NumPy: tolerance there."""
    x = _floats(rng, dtype, shape) if np.dtype(dtype).kind == "f" or dtype == dtypes.bfloat16 \
        else _ints(rng, dtype, shape)
    inexact = kind in ("sum", "prod") and np.dtype(dtype).kind not in "iu"
    rtol = {np.dtype(np.float32): 1e-5}.get(np.dtype(dtype), 1e-2) if inexact else 0.0
    attrs = f"{{dimensions = {_i64s(dims)}}}"
    check(f"reduce_{kind}", [x], attrs=attrs, result=(_reduced(shape, dims), dtype), rtol=rtol)


def test_reduce_max_min_nan_and_zeros() -> None:
    """NaN anywhere in a row gives NaN; -0.0 < +0.0 in either order."""
    x = np.array([[1.0, np.nan, 3.0], [-0.0, 0.0, -1.0], [0.0, -0.0, 1.0], [-np.inf, -np.inf, -np.inf]],
                 np.float32)
    for kind in ("max", "min"):
        check(f"reduce_{kind}", [x], attrs="{dimensions = array<i64: 1>}", result=((4,), np.float32))


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.bool_])
@pytest.mark.parametrize("kind", ["and", "or", "max", "min"])
@pytest.mark.parametrize(("shape", "dims"), REDUCTIONS)
def test_reduce_bitwise(kind: str, dtype: type, shape: tuple, dims: tuple, rng: np.random.Generator) -> None:
    x = rng.integers(0, 2, size=shape).astype(bool) if dtype == np.bool_ else _ints(rng, dtype, shape)
    attrs = f"{{dimensions = {_i64s(dims)}}}"
    check(f"reduce_{kind}", [x], attrs=attrs, result=(_reduced(shape, dims), dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "low", "high", "interior"), [
    ((3, 4), (1, 0), (2, 3), (0, 0)), ((3, 4), (0, 2), (1, 0), (1, 2)), ((5,), (-2,), (-1,), (0,)),
    ((4, 3), (-1, 2), (3, -2), (2, 1)), ((0, 3), (1, 0), (1, 1), (2, 0)), ((1,), (0,), (0,), (5,)),
    ((3,), (-4,), (0,), (1,))])
def test_pad(shape: tuple, low: tuple, high: tuple, interior: tuple, dtype: type,
             rng: np.random.Generator) -> None:
    out = tuple(lo + hi + n + max(n - 1, 0) * k
                for n, lo, hi, k in zip(shape, low, high, interior, strict=True))
    attrs = (f"{{edge_padding_low = {_i64s(low)}, edge_padding_high = {_i64s(high)}, "
             f"interior_padding = {_i64s(interior)}}}")
    value = np.asarray(_random(rng, dtype, (1,))[0] + 100, dtype)
    check("pad", [_random(rng, dtype, shape), value], attrs=attrs, result=(out, dtype))
