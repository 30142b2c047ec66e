"""The iota op (lax.iota, lax.broadcasted_iota), checked against jax.lax eagerly and under jit."""

from __future__ import annotations

import jax
import ml_dtypes
import numpy as np
import pytest

import mlax
from mlax import lax
from mlax.dialect import TensorSpec, get_op, infer
from tests.oracle import check_against_jax

# int8/uint8 wrap past their range, bfloat16/float16 round: counts reach 300.
DTYPES = (np.float32, np.int32, ml_dtypes.bfloat16, np.float16, np.int8, np.uint8, np.uint32)
SHAPES = ((0,), (1,), (300,), (2, 3), (3, 0, 2), (1, 4, 1, 3))
# Each shape with two dtypes (each jax reference call compiles; iota's shape logic is dtype-blind).
CASES = [(shape, DTYPES[(2 * i + k) % len(DTYPES)]) for i, shape in enumerate(SHAPES) for k in (0, 1)]
dtype_ids = {"ids": lambda d: np.dtype(d).name}


@pytest.mark.parametrize("shape, dtype", CASES,
                         ids=[f"{'x'.join(map(str, s))}-{np.dtype(d).name}" for s, d in CASES])
def test_broadcasted_iota(shape, dtype):
    for dimension in range(len(shape)):
        check_against_jax(lambda d=dimension: lax.broadcasted_iota(dtype, shape, d),
                          lambda d=dimension: jax.lax.broadcasted_iota(dtype, shape, d))


@pytest.mark.parametrize("dtype", DTYPES, **dtype_ids)
def test_iota_wraps_and_rounds_like_xla(dtype):
    check_against_jax(lambda: lax.iota(dtype, 300), lambda: jax.lax.iota(dtype, 300))


@pytest.mark.parametrize("size", (0, 1, 7))
def test_iota_small(size):
    check_against_jax(lambda: lax.iota(np.int32, size), lambda: jax.lax.iota(np.int32, size))


def test_iota_under_jit_combines_with_traced_values(rng):
    x = rng.uniform(-3, 3, size=(4, 5)).astype(np.float32)
    check_against_jax(lambda x: lax.add(x, lax.broadcasted_iota(np.float32, (4, 5), 1)),
                      lambda x: jax.lax.add(x, jax.lax.broadcasted_iota(np.float32, (4, 5), 1)), x)


def test_python_dtypes_and_64_bit_requests_canonicalize():
    """Python ``float``/``int`` and 64-bit dtypes give the 32-bit default types, as jax without x64."""
    for dtype, expected in ((float, np.float32), (int, np.int32), (np.int64, np.int32),
                            (np.float64, np.float32)):
        out = lax.iota(dtype, 3)
        assert out.dtype == expected and not out.weak_type


def test_iota_op_definition():
    spec = infer("iota", [], {"shape": (2, 3), "dtype": np.dtype(np.int32), "dimension": 1})
    assert spec == (TensorSpec((2, 3), np.int32),)
    op = get_op("iota")
    assert op.weak_type == "never" and not op.operands
    np.testing.assert_array_equal(op.reference(shape=(2, 3), dtype=np.dtype(np.int32), dimension=0),
                                  [[0, 0, 0], [1, 1, 1]])


@pytest.mark.parametrize("fn, error, match", [
    (lambda: lax.iota(np.bool_, 3), TypeError, r"mlax\.iota: dtype must be an integer or floating-point"),
    (lambda: lax.iota(np.int32, -1), ValueError, r"mlax\.iota: shape \(-1,\) must be nonnegative"),
    (lambda: lax.broadcasted_iota(np.float32, (2, 3), 2), ValueError, r"dimension 2 out of range"),
    (lambda: lax.broadcasted_iota(np.float32, (2, 3), -1), ValueError, r"dimension -1 out of range"),
    (lambda: lax.broadcasted_iota(np.float32, (), 0), ValueError, r"dimension 0 out of range for shape \(\)"),
    (lambda: lax.broadcasted_iota(np.float32, (2, 1.5), 0), TypeError, "shape must be a sequence of ints"),
    (lambda: mlax.jit(lambda: lax.iota(np.bool_, 2))(), TypeError, r"mlax\.iota"),
], ids=["bool", "negative size", "dimension", "negative dimension", "rank 0", "float size", "jit"])
def test_iota_errors(fn, error, match):
    with pytest.raises(error, match=match):
        fn()


def test_iota_is_emitted_under_jit() -> None:
    text = mlax.make_mlir(lambda: lax.broadcasted_iota(np.int32, (2, 3), 1))()
    assert '"mlax.iota"' in text and '"mlax.constant"' not in text


@pytest.mark.parametrize("value", [
    np.array([[1.5, -2.25e-3], [3e30, np.nan]], ml_dtypes.bfloat16),
    np.array([np.inf, -np.inf, 0.1], ml_dtypes.bfloat16),
    np.array(3, np.int32), np.array([1, 2**32 - 1], np.uint32), np.array([True, False]),
    np.array([-1.5, np.nan, np.inf], np.float16),
])
def test_constants_round_trip_bit_exactly(value: np.ndarray) -> None:
    out = mlax.jit(lambda: value)()  # a closed-over NumPy array becomes an mlax.constant
    assert out.dtype == value.dtype and out.shape == value.shape
    np.testing.assert_array_equal(np.asarray(out).reshape(-1).view(np.uint8),
                                  value.reshape(-1).view(np.uint8))


def test_large_bf16_constants_read_back() -> None:
    """From 100 elements on MLIR prints a dense attribute as one hex string; the interpreter
    reads bf16 constants from that text (the bindings expose no bf16 buffer)."""
    value = (np.arange(120, dtype=np.float32) * -0.375 + 1e-39).astype(ml_dtypes.bfloat16).reshape(8, 15)
    out = mlax.jit(lambda: value, backend="interpreter")()
    np.testing.assert_array_equal(np.asarray(out).view(np.uint16), value.view(np.uint16))
