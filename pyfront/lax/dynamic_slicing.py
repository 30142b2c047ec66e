"""mlax.lax's dynamic slices: JAX's names and signatures over the dialect's dynamic_slice and
dynamic_update_slice. Start indices follow jax: negative ones count from the end (unless
``allow_negative_indices=False``), then the op clamps them so the window stays in bounds.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax.array import Array
from mlax.core import Tracer, abstractify, bind, to_numpy
from mlax.dialect import dtypes as ir_dtypes
from mlax.lax.common import operand as as_operand
from mlax.lax.common import operands_like
from mlax.lax.elementwise import add, convert_element_type, lt, select
from mlax.lax.shape import _axis, _ints, expand_dims, index_in_dim, squeeze
from mlax.source_info import where


def _wrap_negative(index: Any, size: int) -> Any:
    """``index + size`` where ``index < 0``, on a traced signed index (jax's negative indexing)."""
    size_value = Array._wrap(np.asarray(size, index.dtype))
    return select(lt(index, 0), add(index, size_value), index)


def _static_index(fname: str, index: Any, size: int, allow_negative: bool) -> int:
    """A concrete start index, wrapped if negative and clamped into [0, size] so any dtype holds it."""
    if isinstance(index, int) and not isinstance(index, bool):
        value = index
    else:
        array = to_numpy(index)
        if array.ndim != 0 or not ir_dtypes.is_int(array.dtype):
            raise TypeError(f"{fname}: start indices must be integer scalars, got "
                            f"{array.dtype.name}{list(array.shape)}{where()}")
        value = int(array)
    if value < 0:
        if not allow_negative:
            raise ValueError(f"{fname}: index {value} is out of bounds for dimension of size {size} "
                             f"with allow_negative_indices=False{where()}")
        value += size
    return min(max(value, 0), size)


def _index_list(fname: str, start_indices: Any) -> list[Any]:
    """The start indices as a list, splitting a 1-D array of indices."""
    if isinstance(start_indices, (Tracer, Array, np.ndarray)):
        shape = abstractify(start_indices).shape
        if len(shape) != 1:
            raise TypeError(f"{fname}: an array of start indices must be 1-D, got shape {shape}{where()}")
        if isinstance(start_indices, Tracer):
            return [index_in_dim(start_indices, k, keepdims=False) for k in range(shape[0])]
        return list(to_numpy(start_indices))
    return list(start_indices)


def _start_indices(fname: str, shape: tuple[int, ...], start_indices: Any,
                   allow_negative_indices: bool | Sequence[bool]) -> list[Any]:
    """Start index operands of one integer dtype, one per dimension, negatives wrapped as jax does.

    Concrete indices are resolved here. Traced ones keep the dtype they share, or take the
    default integer type when they differ (jax rejects that; mlax converts) or when that
    dtype cannot hold the dimension sizes (XLA would overflow while clamping). They are
    converted before wrapping, so the wrap cannot overflow either. (Converting a uint32
    index of 2**31 or more to int32 would turn it negative: that takes mixed index dtypes
    without x64, which jax rejects outright.)
    """
    indices = _index_list(fname, start_indices)
    if len(indices) != len(shape):
        raise ValueError(f"{fname}: expected {len(shape)} start indices (one per operand dimension), "
                         f"got {len(indices)}{where()}")
    allow = ([allow_negative_indices] * len(shape) if isinstance(allow_negative_indices, bool)
             else list(allow_negative_indices))
    for index in indices:
        if isinstance(index, Tracer) and (index.ndim != 0 or not ir_dtypes.is_int(index.dtype)):
            raise TypeError(f"{fname}: start indices must be integer scalars, got {index.aval}{where()}")
    traced = {i.dtype for i in indices if isinstance(i, Tracer)}
    dtype = traced.pop() if len(traced) == 1 else front_dtypes.default_int()
    if max(shape, default=0) > np.iinfo(dtype).max:
        dtype = front_dtypes.default_int()

    out = []
    for index, size, negative in zip(indices, shape, allow, strict=True):
        if not isinstance(index, Tracer):
            out.append(np.asarray(_static_index(fname, index, size, negative), dtype))
            continue
        wrap = negative and ir_dtypes.is_signed_int(index.dtype)
        index = convert_element_type(index, dtype)
        out.append(_wrap_negative(index, size) if wrap else index)
    return out


def dynamic_slice(operand: Any, start_indices: Any, slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """The ``slice_sizes`` window at run-time ``start_indices``, clamped to stay in bounds."""
    x = as_operand(operand)
    sizes = _ints("dynamic_slice", "slice_sizes", slice_sizes)
    indices = _start_indices("dynamic_slice", x.shape, start_indices, allow_negative_indices)
    if sizes == x.shape:
        return x
    return bind("dynamic_slice", x, *indices, slice_sizes=sizes)


def dynamic_update_slice(operand: Any, update: Any, start_indices: Any, *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """``operand`` with the window at ``start_indices`` (clamped into bounds) replaced by ``update``."""
    x, update = operands_like(operand, update)
    indices = _start_indices("dynamic_update_slice", x.shape, start_indices, allow_negative_indices)
    return bind("dynamic_update_slice", x, update, *indices)


def _one_axis(fname: str, shape: tuple[int, ...], axis: int, index: Any) -> tuple[int, list[Any]]:
    """The normalized axis and start indices that are ``index`` on it and 0 elsewhere."""
    axis = _axis(fname, axis, len(shape))
    starts: list[Any] = [0] * len(shape)
    starts[axis] = index
    return axis, starts


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True) -> Any:
    """``dynamic_slice`` along one ``axis``: ``slice_size`` elements from ``start_index``."""
    x = as_operand(operand)
    axis, starts = _one_axis("dynamic_slice_in_dim", x.shape, axis, start_index)
    sizes = list(x.shape)
    sizes[axis] = operator.index(slice_size)
    return dynamic_slice(x, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True) -> Any:
    """Element ``index`` (run-time, clamped) of ``axis``; ``keepdims=False`` drops the axis."""
    x = as_operand(operand)
    axis = _axis("dynamic_index_in_dim", axis, x.ndim)
    out = dynamic_slice_in_dim(x, index, 1, axis, allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """``dynamic_update_slice`` at ``start_index`` along ``axis`` and 0 along the others."""
    x = as_operand(operand)
    _, starts = _one_axis("dynamic_update_slice_in_dim", x.shape, axis, start_index)
    return dynamic_update_slice(x, update, starts, allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """Overwrite element ``index`` of ``axis``; ``update`` may lack that axis."""
    x, update = operands_like(operand, update)
    axis = _axis("dynamic_update_index_in_dim", axis, x.ndim)
    if update.ndim == x.ndim - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(x, update, index, axis, allow_negative_indices=allow_negative_indices)


__all__ = ["dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim", "dynamic_update_index_in_dim",
           "dynamic_update_slice", "dynamic_update_slice_in_dim"]
