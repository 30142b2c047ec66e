"""mlax.lax shape primitives: JAX's names and signatures over the dialect's shape ops.

Static arguments (sizes, dimensions, padding) are Python ints; negative axes are accepted
exactly where jax.lax accepts them. No op is emitted when the result is the operand
(reshape to the same shape, identity permutation, full slice...). The dynamic slices are in
dynamic_slicing.py (they are built on elementwise ops, which broadcast with this module).
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


def moveaxis(operand: Any, source: int | Sequence[int], destination: int | Sequence[int]) -> Any:
    """``operand`` with axes ``source`` moved to ``destination`` (numpy's moveaxis, one
    transpose): lax's composites are written in lax, below mlax.numpy (not in jax.lax's API)."""
    x = as_operand(operand)
    sources, targets = ([int(a) % x.ndim for a in (axes if isinstance(axes, Sequence) else (axes,))]
                        for axes in (source, destination))
    order = [axis for axis in range(x.ndim) if axis not in sources]
    for target, axis in sorted(zip(targets, sources, strict=True)):
        order.insert(target, axis)
    return transpose(x, order)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Any:
    """Values 0, 1, ... counting along ``dimension`` of ``shape``, in ``dtype``."""
    return bind("iota", shape=_ints("broadcasted_iota", "shape", shape),
                dtype=front_dtypes.canonicalize(np.dtype(dtype)), dimension=operator.index(dimension))


def iota(dtype: Any, size: int) -> Any:
    """The vector 0, 1, ..., size - 1 in ``dtype``."""
    return broadcasted_iota(dtype, (operator.index(size),), 0)


__all__ = [
    "broadcast", "broadcast_in_dim", "broadcasted_iota", "collapse", "concatenate", "expand_dims",
    "index_in_dim", "iota", "pad", "reshape", "rev", "slice", "slice_in_dim", "squeeze", "transpose",
]
