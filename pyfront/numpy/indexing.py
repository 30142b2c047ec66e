"""mlax.numpy indexing: ``x[index]`` and functional updates ``x.at[index].set(v)``.

Basic indexing only: static ints, slices of any step, None, Ellipsis, and integer scalar
tracers/Arrays (dynamic indices). A parsed index is a `_Plan`: one static strided slice,
then one dynamic_slice for the dynamic dims, then reversal of the negative-step dims, then
a reshape that drops the integer-indexed dims and inserts the new axes.

Updates combine the indexed region with the update values, then write the region back
with dynamic_update_slice (strided dims are first padded and split so that the region is
contiguous, see `_write_static`). Dynamic indices follow JAX: reads clamp into bounds
after negative wrap-around, updates at out-of-bounds indices are dropped. Static ints out
of bounds raise IndexError (as NumPy; jax.numpy would clamp them).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlax import lax
from mlax.array import Array
from mlax.core import Tracer, with_weak_type
from mlax.numpy.util import asarray
from mlax.source_info import where

__all__: list[str] = []


@dataclass
class _Plan:
    """How to read ``x[index]`` for a basic index, and how to write the region back."""

    shape: tuple[int, ...]  # of x
    starts: list[int] = field(default_factory=list)  # static slice, positive strides
    limits: list[int] = field(default_factory=list)
    strides: list[int] = field(default_factory=list)
    reversed_dims: list[int] = field(default_factory=list)
    dynamic: dict[int, Any] = field(default_factory=dict)  # dim -> scalar index (may be negative)
    out_shape: list[int] = field(default_factory=list)

    @property
    def region_shape(self) -> tuple[int, ...]:
        """Shape of the indexed region before integer dims are dropped (they have size 1)."""
        return tuple(1 if d in self.dynamic else len(range(s, e, st))
                     for d, (s, e, st) in enumerate(zip(self.starts, self.limits, self.strides,
                                                        strict=True)))

    def add_slice(self, index: slice, n: int) -> None:
        start, stop, step = index.indices(n)
        count = len(range(start, stop, step))
        if step < 0:
            self.reversed_dims.append(len(self.starts))
            start, step = (start + (count - 1) * step if count else 0), -step
        elif not count:
            start = 0
        self._add(start, start + (count - 1) * step + 1 if count else start, step)
        self.out_shape.append(count)

    def add_int(self, index: int, n: int) -> None:
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of bounds for axis {len(self.starts)} with size {n}"
                             f"{where()}")
        index %= n
        self._add(index, index + 1, 1)

    def add_dynamic(self, index: Any, n: int) -> None:
        self.dynamic[len(self.starts)] = index
        self._add(0, n, 1)

    def _add(self, start: int, limit: int, stride: int) -> None:
        self.starts.append(start)
        self.limits.append(limit)
        self.strides.append(stride)

    def dynamic_starts(self) -> list[Any]:
        """Start indices for lax.dynamic_slice/dynamic_update_slice (which wrap negatives and clamp)."""
        return [self.dynamic.get(d, 0) for d in range(len(self.shape))]


def _is_static_int(item: Any) -> bool:
    return (isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_))) or (
        isinstance(item, np.ndarray) and item.ndim == 0 and item.dtype.kind in "iu")


def _classify(item: Any) -> str:
    """One of: newaxis, ellipsis, slice, int, dynamic (raises for what is not basic indexing)."""
    if item is None:
        return "newaxis"
    if item is Ellipsis:
        return "ellipsis"
    if isinstance(item, slice):
        for bound in (item.start, item.stop, item.step):
            if bound is not None and not _is_static_int(bound) and not (
                    isinstance(bound, Array) and bound.ndim == 0):
                raise IndexError(f"slice bounds must be static integers or None, got {item}; for a "
                                 f"traced start use mlax.lax.dynamic_slice{where()}")
        return "slice"
    if _is_static_int(item):
        return "int"
    dtype = getattr(item, "dtype", None)
    if isinstance(item, (bool, np.bool_)) or (dtype is not None and np.dtype(dtype) == np.bool_):
        raise NotImplementedError(f"boolean mask indexing is not supported yet (advanced indexing); "
                                  f"use mlax.numpy.where{where()}")
    if isinstance(item, (list, tuple)) or (dtype is not None and np.ndim(item) > 0
                                           and np.dtype(dtype).kind in "iu"):
        raise NotImplementedError(f"indexing with integer arrays (advanced indexing) is not supported "
                                  f"yet; use basic indices (ints, slices, None, ...){where()}")
    if isinstance(item, (Tracer, Array)) and np.dtype(dtype).kind in "iu":
        return "dynamic"
    kind = np.dtype(dtype).name if dtype is not None else type(item).__name__
    raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {kind}{where()}")


def _plan(shape: tuple[int, ...], index: Any) -> _Plan:
    items = index if isinstance(index, tuple) else (index,)
    kinds = [_classify(item) for item in items]
    if kinds.count("ellipsis") > 1:
        raise IndexError(f"an index can only have a single ellipsis ('...'){where()}")
    consumed = sum(k in ("slice", "int", "dynamic") for k in kinds)
    if consumed > len(shape):
        raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but {consumed} were "
                         f"indexed{where()}")
    if "ellipsis" not in kinds:
        items, kinds = items + (Ellipsis,), kinds + ["ellipsis"]
    plan = _Plan(shape)
    for item, kind in zip(items, kinds, strict=True):
        n = shape[len(plan.starts)] if len(plan.starts) < len(shape) else 0
        if kind == "newaxis":
            plan.out_shape.append(1)
        elif kind == "ellipsis":
            for _ in range(len(shape) - consumed):
                plan.add_slice(slice(None), shape[len(plan.starts)])
        elif kind == "slice":
            plan.add_slice(item, n)
        elif kind == "int":
            plan.add_int(operator.index(item), n)
        else:
            plan.add_dynamic(item, n)
    return plan


def _read_region(x: Any, plan: _Plan) -> Any:
    """The indexed region in x's rank (integer-indexed dims kept with size 1, not reversed)."""
    if (plan.starts, plan.limits, plan.strides) != ([0] * x.ndim, list(x.shape), [1] * x.ndim):
        x = lax.slice(x, plan.starts, plan.limits, plan.strides)
    if plan.dynamic:
        x = lax.dynamic_slice(x, plan.dynamic_starts(), plan.region_shape)
    return x


def _finish(region: Any, plan: _Plan, weak: bool) -> Any:
    if plan.reversed_dims:
        region = lax.rev(region, tuple(plan.reversed_dims))
    if tuple(plan.out_shape) != region.shape:
        region = lax.reshape(region, tuple(plan.out_shape))
    return with_weak_type(region, weak)


def getitem(x: Any, index: Any) -> Any:
    """``x[index]`` for basic indices (the implementation of ``__getitem__``)."""
    x = asarray(x)
    plan = _plan(x.shape, index)
    return _finish(_read_region(x, plan), plan, x.weak_type)


def _write_static(base: Any, region: Any, plan: _Plan) -> Any:
    """``base`` with ``region`` written at the static slice of ``plan`` (dynamic dims: index 0).

    A strided dim is padded so that its length is a multiple of the stride with the region's
    first element at a multiple, then split into (rows, stride): the region becomes column 0
    of consecutive rows, one contiguous block for dynamic_update_slice. No masks, no constants.
    """
    if region.shape == base.shape:
        return region
    config, unfolded, block_starts, region_shape, lows = [], [], [], [], []
    for d, (n, count) in enumerate(zip(base.shape, region.shape, strict=True)):
        start, stride = (0, 1) if d in plan.dynamic else (plan.starts[d], plan.strides[d])
        if stride == 1:
            config.append((0, 0, 0))
            unfolded.append(n)
            block_starts.append(start)
            region_shape.append(count)
            lows.append(0)
            continue
        low = -start % stride
        length = -(-max(low + n, low + start + count * stride) // stride) * stride
        config.append((low, length - low - n, 0))
        unfolded += [length // stride, stride]
        block_starts += [(low + start) // stride, 0]
        region_shape += [count, 1]
        lows.append(low)
    if not any(lows) and len(unfolded) == base.ndim:
        return lax.dynamic_update_slice(base, region, block_starts)
    padded = lax.pad(base, lax.convert_element_type(0, base.dtype), config)
    written = lax.dynamic_update_slice(lax.reshape(padded, tuple(unfolded)),
                                       lax.reshape(region, tuple(region_shape)), block_starts)
    written = lax.reshape(written, padded.shape)
    return lax.slice(written, lows, [lo + n for lo, n in zip(lows, base.shape, strict=True)])


def _update(x: Any, index: Any, combine: Callable[[Any], Any], fname: str) -> Any:
    """``x`` with ``x[index]`` replaced by ``combine(x[index])``; x itself is never modified."""
    x = asarray(x)
    plan = _plan(x.shape, index)
    if 0 in plan.region_shape:
        return x
    region = _read_region(x, plan)
    new = combine(_finish(region, plan, x.weak_type))
    new = lax.reshape(new, region.shape) if new.shape != region.shape else new
    if plan.reversed_dims:
        new = lax.rev(new, tuple(plan.reversed_dims))
    if not plan.dynamic:
        return with_weak_type(_write_static(x, new, plan), x.weak_type)
    starts = plan.dynamic_starts()
    sub_shape = tuple(1 if d in plan.dynamic else n for d, n in enumerate(x.shape))
    sub = lax.dynamic_slice(x, starts, sub_shape)
    written = lax.dynamic_update_slice(x, _write_static(sub, new, plan), starts)
    keep = lax.broadcast_in_dim(_in_bounds(plan), x.shape, ())
    return with_weak_type(lax.select(keep, written, x), x.weak_type)


def _in_bounds(plan: _Plan) -> Any:
    """Whether every dynamic index is in ``[-n, n)``: JAX drops updates anywhere else."""
    result = None
    for d, i in plan.dynamic.items():
        n = plan.shape[d]
        if i.dtype.itemsize < 4:  # -n and n must fit the comparison's dtype
            i = lax.convert_element_type(i, np.int32)
        inside = lax.lt(i, n) if i.dtype.kind == "u" else lax.bitwise_and(lax.ge(i, -n), lax.lt(i, n))
        result = inside if result is None else lax.bitwise_and(result, inside)
    return result


def _check_mode(fname: str, mode: Any) -> None:
    if mode is not None:
        raise NotImplementedError(f"at[...].{fname}: mode={mode!r} is not supported yet; reads clamp "
                                  f"and updates drop out-of-bounds dynamic indices{where()}")


def _values_like(fname: str, x: Any, values: Any, shape: tuple[int, ...]) -> Any:
    """Update values broadcast to the indexed shape and cast to x's dtype (as JAX's scatter)."""
    from mlax.numpy.manipulation import broadcast_to

    values = lax.convert_element_type(asarray(values), x.dtype)
    try:
        return broadcast_to(values, shape)
    except ValueError:
        raise ValueError(f"at[...].{fname}: cannot broadcast update values of shape {values.shape} to "
                         f"the indexed shape {shape}{where()}") from None


def _binary_update(fname: str, lax_op: str | None) -> Callable[..., Any]:
    def method(self: _IndexUpdateRef, values: Any, *, indices_are_sorted: bool = False,
               unique_indices: bool = False, mode: Any = None) -> Any:
        _check_mode(fname, mode)
        x = asarray(self.array)

        def combine(current: Any) -> Any:
            new = _values_like(fname, x, values, current.shape)
            return new if lax_op is None else getattr(lax, lax_op)(current, new)

        return _update(x, self.index, combine, fname)

    method.__name__ = method.__qualname__ = fname
    what = "set to" if lax_op is None else f"combined by lax.{lax_op} with"
    method.__doc__ = f"A new array with ``x[index]`` {what} ``values`` (broadcast, cast to x.dtype)."
    return method


class _IndexUpdateRef:
    """``x.at[index]``: the functional update methods of JAX."""

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any) -> None:
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: Any = None,
            fill_value: Any = None) -> Any:
        """``x[index]``."""
        _check_mode("get", mode)
        if fill_value is not None:
            raise NotImplementedError(f"at[...].get: fill_value is not supported yet{where()}")
        return getitem(self.array, self.index)

    set = _binary_update("set", None)
    add = _binary_update("add", "add")
    subtract = _binary_update("subtract", "sub")
    multiply = _binary_update("multiply", "mul")
    mul = multiply
    min = _binary_update("min", "min")
    max = _binary_update("max", "max")

    def apply(self, func: Callable[[Any], Any], *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None) -> Any:
        """A new array with ``func`` applied to ``x[index]`` (elementwise ``func`` expected)."""
        _check_mode("apply", mode)
        x = asarray(self.array)
        return _update(x, self.index, lambda current: lax.convert_element_type(func(current), x.dtype),
                       "apply")


class AtIndexer:
    """``x.at``: indexing it gives the update reference for that index."""

    __slots__ = ("array",)

    def __init__(self, array: Any) -> None:
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)
