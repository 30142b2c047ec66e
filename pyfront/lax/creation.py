"""mlax.lax array creation and dtype queries: full, full_like, empty and dtype (as jax.lax).

Each is a broadcast of a converted scalar, so no new op is needed. Weak types follow jax:
``full`` keeps the fill value's weak type when no dtype is given, ``full_like`` keeps the
template's. ``sharding`` may only leave the array whole (mlax has one device).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax.core import abstractify, is_array_like
from mlax.lax.common import operand as as_operand
from mlax.lax.elementwise import convert_element_type
from mlax.lax.shape import broadcast_in_dim
from mlax.out_sharding import unpartitioned
from mlax.source_info import where


def _shape(fname: str, shape: Any) -> tuple[int, ...]:
    """A static shape: an int or a sequence of nonnegative ints."""
    try:
        dims = (operator.index(shape),) if np.ndim(shape) == 0 else tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{fname}: shape must be a sequence of integers, got {shape!r}{where()}") from None
    if any(d < 0 for d in dims):
        raise TypeError(f"{fname}: shape {dims} has a negative dimension{where()}")
    return dims


def _check_sharding(fname: str, sharding: Any) -> None:
    if not unpartitioned(sharding):
        raise NotImplementedError(f"{fname}: sharding={sharding!r} partitions the result, which mlax does "
                                  "not support yet (one device)")


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None, *, sharding: Any = None) -> Any:
    """An array of ``shape`` filled with the scalar ``fill_value`` (of its dtype unless ``dtype``)."""
    _check_sharding("mlax.lax.full", sharding)
    shape = _shape("mlax.lax.full", shape)
    if np.shape(fill_value):
        raise TypeError(f"mlax.lax.full: fill_value must be a scalar, got shape "
                        f"{np.shape(fill_value)}{where()}")
    value = as_operand(fill_value)
    if dtype is None:
        value = convert_element_type(value, value.dtype, value.weak_type)
    else:
        value = convert_element_type(value, front_dtypes.canonicalize(np.dtype(dtype)))
    return broadcast_in_dim(value, shape, ())


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Sequence[int] | None = None,
              sharding: Any = None) -> Any:
    """``full`` with the shape and dtype (and weak type) of ``x`` unless given."""
    _check_sharding("mlax.lax.full_like", sharding)
    x_dtype, x_weak = front_dtypes.dtype_and_weak(x)
    fill_shape = np.shape(x) if shape is None else _shape("mlax.lax.full_like", shape)
    if dtype is None:
        value = convert_element_type(fill_value, x_dtype, x_weak)
        return broadcast_in_dim(value, fill_shape, ())
    return full(fill_shape, fill_value, dtype)


def empty(shape: Sequence[int], dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of ``shape`` and ``dtype`` whose contents are unspecified (zeros, as jax on CPU)."""
    _check_sharding("mlax.lax.empty", out_sharding)
    return full(shape, 0, dtype)


def dtype(x: Any) -> np.dtype:  # noqa: A001  (jax.lax.dtype)
    """The canonical dtype of a value, a Python scalar type, a NumPy type or a dtype name."""
    if x is None:
        raise ValueError(f"mlax.lax.dtype: invalid argument {x}")
    if is_array_like(x) and not isinstance(x, (str, type, np.dtype)):
        aval = getattr(x, "aval", None)
        return np.dtype(aval.dtype) if aval is not None else front_dtypes.dtype_and_weak(x)[0]
    try:
        return front_dtypes.dtype_and_weak(x)[0]
    except TypeError as err:
        raise TypeError(f"mlax.lax.dtype: cannot determine the dtype of {x!r} ({err})") from None


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """``x`` with leading size-1 dimensions added up to ``rank`` (as it is when at or above it)."""
    x = as_operand(x)
    pad = operator.index(rank) - x.ndim
    if pad <= 0:  # jax returns x as it is, also above the rank
        return x
    return broadcast_in_dim(x, (1,) * pad + x.shape, tuple(range(pad, pad + x.ndim)))


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """``arr`` broadcast (numpy style) to the shape of ``like_arr``."""
    arr, shape = as_operand(arr), abstractify(like_arr).shape
    return broadcast_in_dim(arr, shape, range(len(shape) - arr.ndim, len(shape)))


__all__ = ["broadcast_like", "broadcast_to_rank", "dtype", "empty", "full", "full_like"]
