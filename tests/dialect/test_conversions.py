"""convert and bitcast_convert, and their mlax.lax wrappers, checked against jax.lax."""

from __future__ import annotations

from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest

import mlax
from mlax import lax
from mlax.core import bind
from tests.oracle import (
    ALL_DTYPES,
    FIXED_SHAPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    assert_same,
    check_against_jax,
    check_cases,
    random_array,
    random_shape,
)

BF16 = np.dtype(ml_dtypes.bfloat16)
dtype_ids = {"ids": lambda d: np.dtype(d).name}
# Same-width groups for bitcasts.
WIDTHS = {1: (np.int8, np.uint8), 2: (np.int16, np.uint16, np.float16, BF16),
          4: (np.int32, np.uint32, np.float32)}
WIDTH_OF = {np.dtype(d): w for w, group in WIDTHS.items() for d in group}
BITCAST_DTYPES = [d for group in WIDTHS.values() for d in group]


def _wide_values(rng: np.random.Generator, shape: tuple[int, ...], dtype: object) -> np.ndarray:
    """Random values, floats overflowing every narrow integer type; always an ndarray (jax converts
    NumPy scalars with NumPy's wrapping rules instead of XLA's saturating ones)."""
    if np.dtype(dtype).kind in "iub":
        return np.asarray(random_array(rng, shape, dtype))
    values = rng.uniform(-5e4, 5e4, size=shape) * rng.choice([1e-4, 1e-2, 1.0], size=shape)
    return np.asarray(values.astype(dtype))


# --- convert ---------------------------------------------------------------------------------


SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, -0.5, 2.7, -2.7, 127.5, 128.0, -129.0, 255.9, 256.0, -1.0,
           3e4, -3e4, 65504.0]
# f32 -> f16/bf16 rounding ties and overflow.
HALF_TIES = [1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-11, 1 + 3 * 2**-11, 65519.0, 65520.0, 3.4e38]
# int -> float rounding ties (2**24 + 2**16 + 1 rounds twice on XLA's CPU on its way to bf16).
INT_TIES = [2049, 4097, 65519, 65520, 2**24 + 2**16 + 1, 2**24 + 3]


def _convert_all(module: Any, v: Any) -> tuple[Any, ...]:
    return tuple(module.convert_element_type(v, new_dtype) for new_dtype in ALL_DTYPES)


@pytest.mark.parametrize("dtype", ALL_DTYPES, **dtype_ids)
def test_convert(rng, dtype):
    """``dtype`` to every dtype: random values overflowing narrow types, NaN -> 0, +-inf and
    out-of-range values saturate, fractions truncate, -0.0 -> False, rounding ties."""
    cases = [(_wide_values(rng, s, dtype),) for s in (random_shape(rng), random_shape(rng), *FIXED_SHAPES)]
    if dtype in FLOAT_DTYPES:
        with np.errstate(over="ignore"):
            cases += [(np.array(SPECIAL, np.float32).astype(dtype),),
                      (np.array(HALF_TIES, np.float32).astype(dtype),)]
    elif dtype in INT_DTYPES:
        info = np.iinfo(dtype)
        edges = [info.min, info.max, *(t for t in INT_TIES if info.min <= t <= info.max)]
        full_range = rng.integers(info.min, info.max, size=32, endpoint=True)
        cases.append((np.concatenate([full_range, edges]).astype(dtype),))
    check_cases(lambda v: _convert_all(lax, v), lambda v: _convert_all(jax.lax, v), cases)


def test_convert_weak_types_and_identity():
    assert_same(lax.convert_element_type(1.0, np.float32), jax.lax.convert_element_type(1.0, np.float32))
    assert_same(lax.convert_element_type(1.5, np.int32), jax.lax.convert_element_type(1.5, np.int32))
    assert lax.convert_element_type(np.float32(2), np.int8, weak_type=True).weak_type
    text = mlax.make_mlir(lambda v: lax.convert_element_type(v, np.float32))(np.ones(2, np.float32))
    assert "mlax.convert" not in text
    text = mlax.make_mlir(lambda v: lax.convert_element_type(v, np.int8))(np.ones(2, np.float32))
    assert '"mlax.convert"(%arg0) {new_dtype = i8} : (tensor<2xf32>) -> tensor<2xi8>' in text


@pytest.mark.usefixtures("x64")
def test_convert_x64():
    """64-bit types: saturation at the edges of i64/u64, f64 -> f16/bf16 through f32 (as XLA's CPU)."""
    floats = np.array([9.3e18, -9.3e18, 1.8e19, 2.0**63, -(2.0**63), np.nan, -np.inf, 1 + 2**-11 + 2**-40,
                       1 + 2**-8 + 2**-40, 123456.789], np.float64)
    ints = np.array([2**63 - 1, -(2**63), 2**53 + 1, 2**40 + 2**32 + 1, -5], np.int64)
    unsigned = np.array([2**64 - 1, 2**63 + 1, 7], np.uint64)
    targets = (np.int64, np.uint64, np.int32, np.int8, np.float64, np.float32, np.float16, BF16)

    def convert_all(module: Any, v: Any) -> tuple[Any, ...]:
        return tuple(module.convert_element_type(v, new_dtype) for new_dtype in targets)

    check_cases(lambda v: convert_all(lax, v), lambda v: convert_all(jax.lax, v),
                [(floats,), (ints,), (unsigned,)])


def test_convert_errors():
    x = np.zeros((2,), np.float32)
    with pytest.raises(TypeError, match=r"mlax\.convert: unsupported target dtype int4"):
        bind("convert", x, new_dtype=np.dtype(ml_dtypes.int4))
    with pytest.raises(TypeError, match=r"mlax\.convert: missing attribute"):
        bind("convert", x)
    with pytest.raises(TypeError, match="mlax does not support dtype int4"):
        lax.convert_element_type(x, ml_dtypes.int4)


# --- bitcast_convert -------------------------------------------------------------------------


def _bit_patterns(rng: np.random.Generator, shape: tuple[int, ...], dtype: object) -> np.ndarray:
    """Random bits of ``dtype`` (NaN payloads included: bitcasts must keep every bit)."""
    dtype = np.dtype(dtype)
    raw = rng.integers(0, 256, size=(*shape, dtype.itemsize), dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def _check_bitcasts(cases: list[tuple[np.ndarray, Any]]) -> None:
    """Each (operand, new_dtype) against jax bit for bit, eagerly and jitted; one XLA compile."""
    def bitcast_all(xs: list[Any]) -> list[Any]:
        return [jax.lax.bitcast_convert_type(x, d) for x, (_, d) in zip(xs, cases, strict=True)]

    expected = jax.jit(bitcast_all)([x for x, _ in cases])
    for (x, new_dtype), want in zip(cases, expected, strict=True):
        want = np.asarray(want)
        for got in (lax.bitcast_convert_type(x, new_dtype),
                    mlax.jit(lambda v, d=new_dtype: lax.bitcast_convert_type(v, d))(x)):
            got = np.asarray(got)
            assert got.shape == want.shape and got.dtype == want.dtype, (x.dtype, new_dtype, got.shape)
            np.testing.assert_array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))


@pytest.mark.parametrize("dtype", BITCAST_DTYPES, **dtype_ids)
def test_bitcast(rng, dtype):
    """``dtype`` to every type: same width keeps the shape, narrower adds a minor dimension,
    wider consumes one; random shapes, rank 0 and size 0."""
    src = WIDTH_OF[np.dtype(dtype)]
    cases = []
    for new_dtype in BITCAST_DTYPES:
        dst = WIDTH_OF[np.dtype(new_dtype)]
        for shape in (random_shape(rng, max_rank=2), (), (2, 0)):
            shape = (*shape, dst // src) if dst > src else shape
            cases.append((_bit_patterns(rng, shape, dtype), new_dtype))
    _check_bitcasts(cases)


def test_bitcast_bool_and_weak_type(rng):
    _check_bitcasts([(rng.random((3, 2)) < 0.5, np.bool_)])
    check_against_jax(lambda v: lax.bitcast_convert_type(v, np.int32),
                      lambda v: jax.lax.bitcast_convert_type(v, np.int32), 1.0)


def test_bitcast_errors():
    with pytest.raises(TypeError, match=r"mlax\.bitcast_convert: cannot bitcast between bool and int8"):
        lax.bitcast_convert_type(np.array([True]), np.int8)
    with pytest.raises(TypeError, match=r"mlax\.bitcast_convert: cannot bitcast between uint8 and bool"):
        mlax.jit(lambda v: lax.bitcast_convert_type(v, np.bool_))(np.zeros(2, np.uint8))
    with pytest.raises(ValueError, match=r"mlax\.bitcast_convert: bitcasting \(2, 3\) from int8 to the 4x "
                                         r"wider float32 needs a minor dimension of size 4"):
        lax.bitcast_convert_type(np.zeros((2, 3), np.int8), np.float32)
    with pytest.raises(ValueError, match=r"mlax\.bitcast_convert: .* got shape \(\)"):
        lax.bitcast_convert_type(np.int16(1), np.float32)
    with pytest.raises(TypeError, match=r"mlax\.bitcast_convert: does not support complex values unless"):
        bind("bitcast_convert", np.zeros(2, np.float32), new_dtype=np.dtype(np.complex64))


def test_make_mlir_shows_bitcast():
    text = mlax.make_mlir(lambda v: lax.bitcast_convert_type(v, np.uint8))(np.ones((2,), np.float32))
    assert '"mlax.bitcast_convert"(%arg0) {new_dtype = ui8} : (tensor<2xf32>) -> tensor<2x4xui8>' in text
