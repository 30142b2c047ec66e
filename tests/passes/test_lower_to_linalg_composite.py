"""mlax-lower-to-linalg on erf_inv, nextafter, integer pow and bitcast_convert: the lowered IR,
executed, agrees with the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from mlax.dialect import dtypes
from tests.passes.test_lower_to_linalg import FLOATS, SHAPE, _floats, _ints, check

ALL_NUMERIC = [np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64, np.float32,
               np.float64, np.float16, dtypes.bfloat16]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(), (0, 2), (7, 29)])
def test_erf_inv(dtype: type, shape: tuple[int, ...], rng: np.random.Generator) -> None:
    """XLA's polynomial approximation against SciPy's erfinv: to 1e-6 (f32; its near-1 error
    is that of x*x rounding in f32) or 1e-11 (f64); halves round to the same value."""
    x = rng.uniform(-1.0, 1.0, size=shape)
    edges = [1.0, -1.0, 0.0, -0.0, np.nan, 1.5, -2.0, np.inf, 0.999999, -0.9999999999, 1e-30, 0.5]
    x.reshape(-1)[:len(edges)] = edges[:x.size]
    rtol = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-11}.get(np.dtype(dtype), 0.0)
    check("erf_inv", [x.astype(dtype)], rtol=rtol)


@pytest.mark.parametrize("dtype", FLOATS)
def test_nextafter(dtype: type, rng: np.random.Generator) -> None:
    """Signed zeros, infinities, NaN, the largest finite value, equal operands, random ones."""
    big = float(np.finfo(np.float32 if dtype == dtypes.bfloat16 else dtype).max)
    tiny = float(np.finfo(np.float32 if dtype == dtypes.bfloat16 else dtype).smallest_subnormal)
    pairs = [(0.0, -0.0), (-0.0, 0.0), (0.0, 1.0), (-0.0, -1.0), (0.0, 0.0), (np.inf, 0.0), (-np.inf, 0.0),
             (np.inf, np.inf), (big, np.inf), (-big, -np.inf), (np.nan, 1.0), (1.0, np.nan), (1.0, 2.0),
             (1.0, -2.0), (-1.0, 2.0), (-1.0, -2.0), (tiny, -1.0), (-tiny, 1.0), (2.5, 2.5)]
    x, y = _floats(rng, dtype, (5, 8)), _floats(rng, dtype, (5, 8))
    with np.errstate(over="ignore"):
        x.reshape(-1)[:len(pairs)], y.reshape(-1)[:len(pairs)] = (np.array(v).astype(dtype)
                                                                  for v in zip(*pairs, strict=True))
    check("nextafter", [x, y])


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64])
def test_int_pow(dtype: type, rng: np.random.Generator) -> None:
    """Wrapping square-and-multiply; negative exponents by base 1, -1 (parity) and others."""
    x = _ints(rng, dtype)
    y = rng.integers(0, 12, size=SHAPE).astype(dtype)
    y.reshape(-1)[:2] = np.array([np.iinfo(dtype).max, 64], dtype)
    if np.dtype(dtype).kind == "i":
        x.reshape(-1)[2:6], y.reshape(-1)[2:6] = [1, -1, -1, 3], [-5, -3, -4, -1]
    check("pow", [x, y])


def _bits(rng: np.random.Generator, dtype: type, shape: tuple[int, ...]) -> np.ndarray:
    """Uniform random bit patterns (every float class, NaN payloads included)."""
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * np.dtype(dtype).itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


@pytest.mark.parametrize("target", ALL_NUMERIC)
@pytest.mark.parametrize("source", ALL_NUMERIC)
def test_bitcast_convert(source: type, target: type, rng: np.random.Generator) -> None:
    """Same width: same shape; narrower: a new minor dimension; wider: the minor one consumed."""
    ratio = np.dtype(target).itemsize / np.dtype(source).itemsize
    for shape in [(3, 4), ()] if ratio <= 1 else [(3,), (0,)]:
        in_shape = (*shape, int(ratio)) if ratio > 1 else shape
        out_shape = (*shape, int(1 / ratio)) if ratio < 1 else shape
        check("bitcast_convert", [_bits(rng, source, in_shape)],
              attrs=f"{{new_dtype = {dtypes.mlir_name(np.dtype(target))}}}", result=(out_shape, target),
              nan_bits=True)


def test_bitcast_convert_bool(rng: np.random.Generator) -> None:
    check("bitcast_convert", [rng.integers(0, 2, size=SHAPE).astype(bool)], attrs="{new_dtype = i1}")
