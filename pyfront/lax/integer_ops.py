"""mlax.lax.mulhi and shape_as_value: integer helpers of jax.lax composed from mlax's ops.

``mulhi`` takes the high half of the double-width product by schoolbook multiplication of
half-width limbs, so it needs no wider dtype (64-bit operands need no 128-bit type); signed
operands use the unsigned high half corrected by the operands' signs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mlax.core import with_weak_type
from mlax.lax import elementwise as ew
from mlax.lax.common import operands_like
from mlax.lax.creation import full
from mlax.source_info import where

__all__ = ["mulhi", "shape_as_value"]


def _check(x: Any, y: Any) -> None:
    for position, value in enumerate((x, y)):
        if not np.issubdtype(value.dtype, np.integer):
            raise TypeError(f"mulhi does not accept dtype {value.dtype} at position {position}. Accepted "
                            f"dtypes at position {position} are subtypes of integer.{where()}")
    if x.dtype != y.dtype:
        raise TypeError(f"lax.mulhi requires arguments to have the same dtypes, got {x.dtype}, "
                        f"{y.dtype}.{where()}")
    if x.ndim and y.ndim and x.shape != y.shape:
        if x.ndim != y.ndim:
            raise TypeError(f"mulhi: arrays must have the same number of dimensions, got "
                            f"{ {x.ndim, y.ndim} }{where()}")
        raise TypeError(f"mulhi: arrays must have the same shape, got {x.shape} and {y.shape}{where()}")


def _unsigned_mulhi(x: Any, y: Any, bits: int) -> Any:
    half = bits // 2
    mask = (1 << half) - 1
    xl, xh = ew.bitwise_and(x, mask), ew.shift_right_logical(x, half)
    yl, yh = ew.bitwise_and(y, mask), ew.shift_right_logical(y, half)
    carry = ew.shift_right_logical(ew.mul(xl, yl), half)
    middle = ew.add(ew.mul(xh, yl), carry)
    cross = ew.add(ew.mul(xl, yh), ew.bitwise_and(middle, mask))
    high = ew.add(ew.mul(xh, yh), ew.shift_right_logical(middle, half))
    return ew.add(high, ew.shift_right_logical(cross, half))


def mulhi(x: Any, y: Any, /) -> Any:
    """The most significant half of the double-width product ``x * y`` of integers of one dtype."""
    x, y = operands_like(x, y)
    _check(x, y)
    dtype, weak = x.dtype, bool(x.weak_type and y.weak_type)
    bits = dtype.itemsize * 8
    if dtype.kind == "u":
        return with_weak_type(_unsigned_mulhi(x, y, bits), weak)
    unsigned = np.dtype(f"uint{bits}")
    xu, yu = ew.bitcast_convert_type(x, unsigned), ew.bitcast_convert_type(y, unsigned)
    high = _unsigned_mulhi(xu, yu, bits)  # minus y if x < 0, minus x if y < 0 (mod 2**bits)
    high = ew.sub(high, ew.mul(yu, ew.convert_element_type(ew.lt(x, 0), unsigned)))
    high = ew.sub(high, ew.mul(xu, ew.convert_element_type(ew.lt(y, 0), unsigned)))
    return with_weak_type(ew.bitcast_convert_type(high, dtype), weak)


def shape_as_value(shape: Sequence[int]) -> Any:
    """A (constant) shape as an integer vector: int32, or int64 where a dimension needs it."""
    dims = tuple(int(d) for d in shape)
    dtype = np.dtype(np.int64) if any(d > np.iinfo(np.int32).max for d in dims) else np.dtype(np.int32)
    if not dims:
        return full((0,), np.array(0, dtype=dtype))
    return np.asarray(dims, dtype=dtype)
