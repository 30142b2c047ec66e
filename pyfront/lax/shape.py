"""mlax.lax shape primitives: JAX's names and signatures over the dialect's shape ops.

Static arguments (sizes, dimensions, padding) are Python ints; negative axes are accepted
exactly where jax.lax accepts them. No op is emitted when the result is the operand
(reshape to the same shape, identity permutation, full slice...). Dynamic start indices
follow jax: negative ones count from the end (unless ``allow_negative_indices=False``),
then the op clamps them so the window stays in bounds.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax.array import Array
from mlax.core import Tracer, abstractify, bind, to_numpy
from mlax.dialect import dtypes as ir_dtypes
from mlax.dialect.tensor_spec import TensorSpec
from mlax.lax.common import operand as as_operand
from mlax.lax.common import operands_like
from mlax.source_info import where


def _ints(fname: str, what: str, values: Any) -> tuple[int, ...]:
    """A static sequence of Python ints (NumPy ints and arrays accepted)."""
    if isinstance(values, Tracer):
        raise TypeError(f"{fname}: {what} must be static ints, got a traced value{where()}")
    if isinstance(values, (np.ndarray, Array)):
        values = to_numpy(values).reshape(-1).tolist()
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{fname}: {what} must be a sequence of ints, got {values!r}{where()}") from None


def _axis(fname: str, axis: int, ndim: int) -> int:
    """One axis in [-ndim, ndim) as a nonnegative dimension number."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{fname}: axis {axis} is out of bounds for array of dimension {ndim}{where()}")
    return axis % ndim


def _axes(fname: str, axes: Any, ndim: int) -> tuple[int, ...]:
    """Distinct axes, negatives counted from the end."""
    result = tuple(_axis(fname, a, ndim) for a in _ints(fname, "dimensions", axes))
    if len(set(result)) != len(result):
        raise ValueError(f"{fname}: repeated axis in {result}{where()}")
    return result


# --- broadcasting, reshaping, permuting ----------------------------------------------------------------

def broadcast_in_dim(operand: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> Any:
    """Broadcast to ``shape``; operand dimension i maps to result dimension ``broadcast_dimensions[i]``."""
    x = as_operand(operand)
    shape = _ints("broadcast_in_dim", "shape", shape)
    dims = _ints("broadcast_in_dim", "broadcast_dimensions", broadcast_dimensions)
    if x.shape == shape and dims == tuple(range(len(shape))):
        return x
    return bind("broadcast_in_dim", x, shape=shape, broadcast_dimensions=dims)


def broadcast(operand: Any, sizes: Sequence[int]) -> Any:
    """Add leading dimensions of ``sizes``: the result shape is ``sizes + operand.shape``."""
    x = as_operand(operand)
    sizes = _ints("broadcast", "sizes", sizes)
    return broadcast_in_dim(x, sizes + x.shape, tuple(range(len(sizes), len(sizes) + x.ndim)))


def reshape(operand: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None) -> Any:
    """Row-major reshape to ``new_sizes``; ``dimensions`` transposes the operand first (as jax)."""
    x = as_operand(operand)
    if dimensions is not None:
        x = transpose(x, dimensions)
    new_sizes = _ints("reshape", "new_sizes", new_sizes)
    if x.shape == new_sizes:
        return x
    return bind("reshape", x, shape=new_sizes)


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    """Permute dimensions: result dimension i is operand dimension ``permutation[i]``."""
    x = as_operand(operand)
    permutation = _ints("transpose", "permutation", permutation)
    if permutation == tuple(range(x.ndim)):
        return x
    return bind("transpose", x, permutation=permutation)


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    """Reverse the elements along ``dimensions``."""
    x = as_operand(operand)
    dimensions = _ints("rev", "dimensions", dimensions)
    if not dimensions:
        return x
    return bind("rev", x, dimensions=dimensions)


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    """Remove the size-1 ``dimensions`` (negative axes count from the end)."""
    x = as_operand(array)
    dims = _axes("squeeze", dimensions, x.ndim)
    if any(x.shape[d] != 1 for d in dims):
        raise ValueError(f"squeeze: cannot squeeze dimensions {dims} of shape {x.shape}: every squeezed "
                         f"dimension must have size 1{where()}")
    return reshape(x, tuple(n for d, n in enumerate(x.shape) if d not in dims))


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """Insert size-1 dimensions at ``dimensions`` (positions in the result; negatives from its end)."""
    x = as_operand(array)
    rank = x.ndim + len(_ints("expand_dims", "dimensions", dimensions))
    dims = _axes("expand_dims", dimensions, rank)
    sizes = iter(x.shape)
    return reshape(x, tuple(1 if d in dims else next(sizes) for d in range(rank)))


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """Merge dimensions ``[start_dimension, stop_dimension)`` into one (negatives from the end)."""
    x = as_operand(operand)
    start = operator.index(start_dimension)
    stop = x.ndim if stop_dimension is None else operator.index(stop_dimension)
    start, stop = (start + x.ndim if start < 0 else start), (stop + x.ndim if stop < 0 else stop)
    if not 0 <= start <= stop <= x.ndim:
        raise ValueError(f"collapse: invalid dimension range [{start_dimension}:{stop_dimension}] for "
                         f"shape {x.shape}{where()}")
    merged = math.prod(x.shape[start:stop])
    return reshape(x, x.shape[:start] + (merged,) + x.shape[stop:])


# --- static slices ---------------------------------------------------------------------------------

def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],  # noqa: A001
          strides: Sequence[int] | None = None) -> Any:
    """``operand[start:limit:stride]`` in every dimension (static, in-bounds indices)."""
    x = as_operand(operand)
    start = _ints("slice", "start_indices", start_indices)
    limit = _ints("slice", "limit_indices", limit_indices)
    step = (1,) * len(start) if strides is None else _ints("slice", "strides", strides)
    if start == (0,) * x.ndim and limit == x.shape and step == (1,) * x.ndim:
        return x
    return bind("slice", x, start_indices=start, limit_indices=limit, strides=step)


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None, stride: int = 1,
                 axis: int = 0) -> Any:
    """Slice along one ``axis``; ``None`` means the edge and negative indices count from the end."""
    x = as_operand(operand)
    axis = _axis("slice_in_dim", axis, x.ndim)
    size = x.shape[axis]
    bounds = [0 if start_index is None else operator.index(start_index),
              size if limit_index is None else operator.index(limit_index)]
    start, limit = (b + size if b < 0 else b for b in bounds)
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return slice(x, starts, limits, strides)


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """Element ``index`` of ``axis`` (negative from the end); ``keepdims=False`` drops the axis."""
    x = as_operand(operand)
    axis = _axis("index_in_dim", axis, x.ndim)
    size, index = x.shape[axis], operator.index(index)
    if not -size <= index < size:
        raise IndexError(f"index_in_dim: index {index} is out of bounds for axis {axis} with size "
                         f"{size}{where()}")
    index %= size
    out = slice_in_dim(x, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


# --- dynamic slices ---------------------------------------------------------------------------------

def _wrap_negative(index: Any, size: int) -> Any:
    """``index + size`` where ``index < 0``, on a traced signed index (jax's negative indexing)."""
    from mlax.lax.elementwise import add, lt, select  # lax.elementwise imports this module

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
    from mlax.lax.elementwise import convert_element_type  # lax.elementwise imports this module

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


# --- joining, padding, counting ------------------------------------------------------------------------

def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    """Join ``operands`` (one dtype) along ``dimension``, as a chain of binary concatenations."""
    xs = [as_operand(x) for x in operands]
    if not xs:
        raise ValueError(f"concatenate: needs at least one operand{where()}")
    dimension = operator.index(dimension)
    return functools.reduce(lambda a, b: bind("concatenate", a, b, dimension=dimension), xs)


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """Pad with ``padding_value``: ``(low, high, interior)`` per dimension; negative edges crop."""
    x, value = operands_like(operand, padding_value)
    config = [_ints("pad", "padding_config entry", c) for c in padding_config]
    if any(len(c) != 3 for c in config):
        raise ValueError(f"pad: padding_config entries must be (low, high, interior) triples, "
                         f"got {padding_config}{where()}")
    low, high, interior = (tuple(c[k] for c in config) for k in range(3))
    if (len(config) == x.ndim and not any(low + high + interior)
            and abstractify(value).spec == TensorSpec((), x.dtype)):
        return x
    return bind("pad", x, value, edge_padding_low=low, edge_padding_high=high, interior_padding=interior)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Any:
    """Values 0, 1, ... counting along ``dimension`` of ``shape``, in ``dtype``."""
    return bind("iota", shape=_ints("broadcasted_iota", "shape", shape),
                dtype=front_dtypes.canonicalize(np.dtype(dtype)), dimension=operator.index(dimension))


def iota(dtype: Any, size: int) -> Any:
    """The vector 0, 1, ..., size - 1 in ``dtype``."""
    return broadcasted_iota(dtype, (operator.index(size),), 0)


__all__ = [
    "broadcast", "broadcast_in_dim", "broadcasted_iota", "collapse", "concatenate", "dynamic_index_in_dim",
    "dynamic_slice", "dynamic_slice_in_dim", "dynamic_update_index_in_dim", "dynamic_update_slice",
    "dynamic_update_slice_in_dim", "expand_dims", "index_in_dim", "iota", "pad", "reshape", "rev", "slice",
    "slice_in_dim", "squeeze", "transpose",
]
