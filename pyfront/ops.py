"""jax.ops: segment reductions, the sums/products/extrema of ``data`` rows grouped by id.

Graph networks and ragged batches reach for these: row ``i`` of ``data`` goes to segment
``segment_ids[i]``. Each is one scatter into an array filled with the reduction's identity, with
jax's conventions: ids out of ``[0, num_segments)`` (negative ones too: they are not counted from
the end) are dropped unless ``mode`` says otherwise, empty segments hold the identity, and
``bucket_size`` reduces buckets of rows separately first, for accuracy, then combines them.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import mlax.numpy as mnp
from mlax import lax
from mlax.errors import user_error
from mlax.numpy.util import concrete

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _identity(kind: str, dtype: np.dtype) -> Any:
    """The value an empty segment holds: the reduction's identity in ``dtype`` (jax's)."""
    if kind == "add":
        return 0
    if kind == "mul":
        return 1
    if dtype == np.bool_:
        return kind == "min"
    if np.issubdtype(dtype, np.inexact):
        return np.inf if kind == "min" else -np.inf
    info = np.iinfo(dtype)
    return info.max if kind == "min" else info.min


_SCATTER = {"add": lax.scatter_add, "mul": lax.scatter_mul, "min": lax.scatter_min, "max": lax.scatter_max}
_COMBINE = {"add": mnp.sum, "mul": mnp.prod, "min": mnp.min, "max": mnp.max}


def _num_segments(name: str, num_segments: Any, segment_ids: Any) -> int:
    if num_segments is None:  # as jax: the largest id + 1, which needs concrete ids
        return int(np.max(concrete(segment_ids))) + 1
    try:
        n = operator.index(num_segments)
    except TypeError:
        raise user_error(TypeError, f"{name}: num_segments must be a concrete integer, got {num_segments!r}",
                         f"num_segments of mlax.ops.{name}") from None
    if n < 0:
        raise user_error(ValueError, "num_segments must be non-negative.", f"num_segments of mlax.ops.{name}")
    return n


def _segment(name: str, kind: str, data: Any, segment_ids: Any, num_segments: Any, indices_are_sorted: bool,
             unique_indices: bool, bucket_size: int | None, mode: Any) -> Any:
    data, segment_ids = mnp.asarray(data), mnp.asarray(segment_ids)
    if not mnp.issubdtype(segment_ids.dtype, mnp.integer):
        raise user_error(TypeError, f"{name}: segment_ids must be integers, got {segment_ids.dtype}",
                         f"segment_ids of mlax.ops.{name}")
    if segment_ids.ndim != 1 or data.ndim == 0 or data.shape[0] != segment_ids.shape[0]:
        raise user_error(ValueError, f"{name}: segment_ids must be one id per row of data: got ids of "
                         f"shape {segment_ids.shape} for data of shape {data.shape}",
                         f"segment_ids of mlax.ops.{name}")
    n = _num_segments(name, num_segments, segment_ids)
    rows = data.shape[1:]
    ids = mnp.expand_dims(segment_ids, -1)
    buckets = 1 if bucket_size is None else -(-segment_ids.size // bucket_size)
    if bucket_size is not None:  # jax's bucketing: the index pair (row // bucket_size, id)
        bucket = mnp.arange(segment_ids.size, dtype=segment_ids.dtype) // bucket_size
        ids = mnp.stack([bucket, segment_ids], axis=-1)
    out_shape = ((buckets,) if bucket_size is not None else ()) + (n, *rows)
    out = mnp.full(out_shape, _identity(kind, data.dtype), dtype=data.dtype)
    counted = 2 if bucket_size is not None else 1
    numbers = lax.ScatterDimensionNumbers(update_window_dims=tuple(range(1, data.ndim)),
                                          inserted_window_dims=tuple(range(counted)),
                                          scatter_dims_to_operand_dims=tuple(range(counted)))
    out = _SCATTER[kind](out, ids, data, numbers, indices_are_sorted=indices_are_sorted,
                         unique_indices=unique_indices, mode="drop" if mode is None else mode)
    return _COMBINE[kind](out, axis=0).astype(data.dtype) if bucket_size is not None else out


def _define(name: str, kind: str, what: str) -> Any:
    def segment_op(data: Any, segment_ids: Any, num_segments: int | None = None,
                   indices_are_sorted: bool = False, unique_indices: bool = False,
                   bucket_size: int | None = None, mode: Any = None) -> Any:
        return _segment(name, kind, data, segment_ids, num_segments, indices_are_sorted, unique_indices,
                        bucket_size, mode)

    segment_op.__name__ = segment_op.__qualname__ = name
    segment_op.__doc__ = (f"jax.ops.{name}: the {what} of the rows of ``data`` in each segment; "
                          "``num_segments`` (static) defaults to max(segment_ids) + 1, which needs "
                          "concrete ids.")
    return segment_op


segment_sum = _define("segment_sum", "add", "sum")
segment_prod = _define("segment_prod", "mul", "product")
segment_max = _define("segment_max", "max", "maximum")
segment_min = _define("segment_min", "min", "minimum")
