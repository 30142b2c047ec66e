"""mlax.numpy indexing: ``x[index]``, functional updates ``x.at[index].op(v)``, take.

Basic indices (static ints, slices of any step, None, Ellipsis, integer scalar tracers) are a
`_Plan`: one static strided slice, then one dynamic_slice for the dynamic dims, then reversal
of the negative-step dims, then a reshape that drops the integer-indexed dims and inserts the
new axes. Updates combine the indexed region with the values and write it back with
dynamic_update_slice (strided dims padded and split so that the region is contiguous, see
`_write_static`). Dynamic indices follow JAX: reads clamp after negative wrap-around,
updates out of bounds are dropped. Static ints out of bounds raise IndexError (as NumPy).

Advanced indices (integer arrays and lists, concrete boolean masks, and with them every int)
are an `_Advanced`: new axes inserted and slices applied first, then one gather (reads) or
scatter (updates, written back into the sliced region) over the indexed dimensions, whose
broadcast index shape replaces them where they are adjacent and goes first otherwise (NumPy's
rule). Negative indices count from the end; reads promise in-bounds indices (they clamp, as
JAX's default), updates drop out-of-bounds ones; ``mode=`` and ``fill_value=`` choose as in
JAX and send basic indices through gather/scatter too. Repeated indices combine in order.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax
from mlax.array import Array
from mlax.core import Tracer, to_numpy, with_weak_type
from mlax.errors import ConcretizationTypeError, NonConcreteBooleanIndexError
from mlax.lax.indexing import mode_name
from mlax.numpy.manipulation import broadcast_to
from mlax.numpy.util import asarray
from mlax.source_info import where
from mlax.tracer_text import jax_aval

__all__ = ["take", "take_along_axis"]


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
    """One of: newaxis, ellipsis, slice, int, dynamic (scalar tracer), advanced (integer array or
    list), mask (boolean array); raises for anything else."""
    if item is None:
        return "newaxis"
    if item is Ellipsis:
        return "ellipsis"
    if isinstance(item, slice):
        for bound in (item.start, item.stop, item.step):
            if bound is not None and not _is_static_int(bound) and not (
                    type(bound) is Array and bound.ndim == 0):
                raise IndexError(f"slice bounds must be static integers or None, got {item}; for a "
                                 f"traced start use mlax.lax.dynamic_slice{where()}")
        return "slice"
    if _is_static_int(item):
        return "int"
    if isinstance(item, (bool, np.bool_)):
        return "mask"
    if isinstance(item, (list, tuple)):
        item = np.asarray(item) if not any(isinstance(e, (Tracer, Array)) for e in item) else asarray(item)
        if item.dtype == np.float64 and item.size == 0:
            return "advanced"  # x[[]]: an empty integer index, as NumPy
    dtype = getattr(item, "dtype", None)
    kind = np.dtype(dtype).kind if dtype is not None else None
    if kind == "b":
        return "mask"
    if kind in ("i", "u"):
        return "dynamic" if isinstance(item, Tracer) and item.ndim == 0 else "advanced"
    name = np.dtype(dtype).name if dtype is not None else type(item).__name__
    raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {name}{where()}")


def _reject_list_index(index: Any) -> None:
    """jax's TypeError for a non-tuple sequence as the whole index (``x[[1, 1]]``): NumPy reads
    some as tuples and others as arrays; jax, and mlax, ask for one or the other."""
    if isinstance(index, tuple) or not isinstance(index, Sequence) or isinstance(index, str):
        return
    if any(isinstance(i, (np.ndarray, Array)) and np.ndim(i) != 0 or isinstance(i, (Sequence, slice))
           or i is Ellipsis or i is None for i in index):
        fix = "arr[tuple(seq)]"
    else:
        fix = "arr[array(seq)]"
    raise TypeError(f"Using a non-tuple sequence for multidimensional indexing is not allowed; use `{fix}` "
                    "instead of `arr[seq]`. See https://github.com/jax-ml/jax/issues/4564 for more "
                    f"information.{where()}")


def _check_python_ints(index: Any) -> None:
    """jax's OverflowError for a Python int index that its index dtype (int32; int64 under x64)
    cannot hold: ``x[2**40]`` is an error, not a clamped read."""
    dtype = front_dtypes.default_int()
    bounds = np.iinfo(dtype)
    for item in index if isinstance(index, tuple) else (index,):
        if type(item) is int and not bounds.min <= item <= bounds.max:
            raise OverflowError(f"Python int {item} too large to convert to {dtype.name}{where()}")


def _items(shape: tuple[int, ...], index: Any) -> tuple[tuple, list[str]]:
    """The index as a tuple of items with their kinds, ending in an ellipsis (checked for count)."""
    _reject_list_index(index)
    items = index if isinstance(index, tuple) else (index,)
    kinds = [_classify(item) for item in items]
    if kinds.count("ellipsis") > 1:
        raise IndexError(f"an index can only have a single ellipsis ('...'){where()}")
    consumed = sum(k in ("slice", "int", "dynamic", "advanced") for k in kinds) + sum(
        np.ndim(item) for item, k in zip(items, kinds, strict=True) if k == "mask")
    if consumed > len(shape):
        raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but {consumed} were "
                         f"indexed{where()}")
    if "ellipsis" not in kinds:
        items, kinds = items + (Ellipsis,), kinds + ["ellipsis"]
    return items, kinds


def _plan(shape: tuple[int, ...], index: Any) -> _Plan:
    items, kinds = _items(shape, index)
    consumed = sum(k in ("slice", "int", "dynamic") for k in kinds)
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
            i = operator.index(item)
            if -n <= i < n:
                plan.add_int(i, n)
            else:  # as JAX: like a traced index, clamped when read and dropped when written
                plan.add_dynamic(np.int32(np.clip(i, -(2**31), 2**31 - 1)), n)
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
    """``x[index]`` (the implementation of ``__getitem__``): basic indices slice, advanced ones gather."""
    x = asarray(x)
    _check_python_ints(index)
    if _is_advanced(_items(x.shape, index)[1]):
        return _get(x, index, None, None)
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


# --- advanced indexing: gather and scatter ----------------------------------------------------------


@dataclass
class _Advanced:
    """How to index with integer arrays / masks (ints count as rank-0 arrays here, as NumPy).

    ``None`` axes are inserted into x first (``expanded``) and slices applied by ``plan``, so
    every remaining item is a whole dimension (a window dimension) or an advanced index on
    one (``dims``). The indices broadcast to ``shape``; their result dimensions replace the
    indexed ones where they are adjacent, else they go first (NumPy's rule).
    """

    expanded: tuple[int, ...]
    plan: _Plan
    dims: list[int]
    indices: list[Any]
    shape: tuple[int, ...]

    @property
    def front(self) -> int:
        """Where the index dimensions go in the result: before this many window dimensions."""
        if not self.dims or self.dims != list(range(self.dims[0], self.dims[0] + len(self.dims))):
            return 0
        return self.dims[0]

    def window_dims(self) -> tuple[int, ...]:
        """The result dimensions that are whole dimensions of the region (offset dims)."""
        count = len(self.plan.out_shape) - len(self.dims)
        first = self.front
        return tuple(range(first)) + tuple(range(first + len(self.shape), count + len(self.shape)))

    def out_shape(self) -> tuple[int, ...]:
        rest = [n for d, n in enumerate(self.plan.out_shape) if d not in self.dims]
        return tuple(rest[:self.front]) + self.shape + tuple(rest[self.front:])


def _mask_indices(mask: Any, shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    if isinstance(mask, Tracer):  # known under grad outside jit (concrete mode), as in JAX
        try:
            mask = to_numpy(mask)
        except ConcretizationTypeError as err:  # chained: a concrete retrace would know it
            raise NonConcreteBooleanIndexError(  # jax's text, then mlax's advice
                f"{jax_aval(mask.aval)}\nA boolean mask gives a shape that depends on its values; use "
                f"mlax.numpy.where (e.g. jnp.where(mask, x, 0)) instead.{where()}") from err
    mask = np.asarray(mask)
    if mask.ndim == 0:
        return ()
    if mask.shape != shape:
        raise IndexError(f"boolean index of shape {mask.shape} does not match the indexed dimensions "
                         f"{shape}{where()}")
    return np.nonzero(mask)


def _advanced(shape: tuple[int, ...], items: tuple, kinds: list[str]) -> _Advanced:
    expanded: list[int] = []
    slices: list[slice] = []
    dims: list[int] = []
    raw: list[Any] = []
    position = 0  # in x's shape
    consumed = sum(k in ("slice", "int", "dynamic", "advanced") for k in kinds) + sum(
        np.ndim(item) for item, k in zip(items, kinds, strict=True) if k == "mask")
    for item, kind in zip(items, kinds, strict=True):
        if kind == "newaxis" or (kind == "mask" and not np.ndim(item)):
            if kind == "mask":  # a scalar boolean: a new axis indexed by [0] (True) or [] (False)
                _mask_indices(item, ())  # must be concrete
                dims.append(len(expanded))
                raw.append(np.arange(1 if item else 0))
            expanded.append(1)
            slices.append(slice(None))
            continue
        count = {"ellipsis": len(shape) - consumed, "mask": np.ndim(item)}.get(kind, 1)
        sizes = shape[position:position + count]
        if kind == "mask":
            raw += list(_mask_indices(item, sizes))
        elif kind in ("int", "dynamic", "advanced"):
            raw.append(item)
        if kind not in ("ellipsis", "slice"):
            dims += range(len(expanded), len(expanded) + count)
        expanded += sizes
        slices += [item] if kind == "slice" else [slice(None)] * count
        position += count
    plan = _Plan(tuple(expanded))
    for s, n in zip(slices, expanded, strict=True):
        plan.add_slice(s, n)
    arrays = [_index_array(i) for i in raw]
    try:
        broadcast = tuple(np.broadcast_shapes(*(np.shape(a) for a in arrays)))
    except ValueError:
        shown = ", ".join(str(tuple(np.shape(a))) for a in arrays)
        raise IndexError(f"shape mismatch: indexing arrays could not be broadcast together with shapes "
                         f"{shown}{where()}") from None
    return _Advanced(tuple(expanded), plan, dims, arrays, broadcast)


def _index_array(item: Any) -> Any:
    """An integer index as a NumPy array (static) or a tracer."""
    if isinstance(item, (list, tuple)):
        item = asarray(item) if any(isinstance(e, (Tracer, Array)) for e in item) else np.asarray(item)
        if item.size == 0:
            item = item.astype(np.int32)
    if type(item) is Array:  # a concrete one (tracers are instances of Array too)
        item = np.asarray(item)
    return item if isinstance(item, Tracer) else np.asarray(item)


def _index_tensor(adv: _Advanced, sizes: tuple[int, ...], wrap: bool) -> Any:
    """The gather/scatter indices: the indices broadcast, stacked along a last dimension, with
    negative ones counted from the end of their dimension when ``wrap``."""
    dtype = front_dtypes.default_int()
    info = np.iinfo(dtype)
    columns = []
    for index, d in zip(adv.indices, adv.dims, strict=True):
        n = sizes[d]
        if not isinstance(index, Tracer):
            value = np.asarray(index)
            value = (np.minimum(value, n) if value.dtype == np.uint64 else value).astype(np.int64)
            value = np.where(value < 0, value + n, value) if wrap else value
            columns.append(np.broadcast_to(np.clip(value, info.min, info.max).astype(dtype), adv.shape))
            continue
        if index.dtype.kind == "u" and n <= np.iinfo(index.dtype).max:
            index = lax.min(index, lax.convert_element_type(n, index.dtype))  # stays n or above
        index = lax.convert_element_type(index, dtype)
        if wrap:
            index = lax.select(lax.lt(index, 0), lax.add(index, lax.convert_element_type(n, dtype)), index)
        columns.append(lax.broadcast_in_dim(index, adv.shape, tuple(range(len(adv.shape) - index.ndim,
                                                                           len(adv.shape)))))
    if all(isinstance(c, np.ndarray) for c in columns):
        return np.stack(columns, axis=-1) if columns else np.zeros(adv.shape + (0,), dtype)
    columns = [lax.reshape(asarray(c), adv.shape + (1,)) for c in columns]
    return lax.concatenate(columns, len(adv.shape))


def _oriented_region(x: Any, adv: _Advanced) -> Any:
    """x with the new axes inserted and the slices applied (reversed where the step is negative)."""
    region = _read_region(lax.reshape(x, adv.expanded) if adv.expanded != x.shape else x, adv.plan)
    return lax.rev(region, tuple(adv.plan.reversed_dims)) if adv.plan.reversed_dims else region


def _gather(x: Any, adv: _Advanced, mode: str, fill_value: Any, wrap: bool = True) -> Any:
    region = _oriented_region(x, adv)
    out_shape = adv.out_shape()
    if 0 in out_shape:
        return lax.broadcast_in_dim(lax.convert_element_type(0, x.dtype), out_shape, ())
    if any(region.shape[d] == 0 for d in adv.dims):
        raise IndexError(f"index out of bounds: cannot index a dimension of size 0{where()}")
    indices = _index_tensor(adv, region.shape, wrap)
    numbers = lax.GatherDimensionNumbers(offset_dims=adv.window_dims(), collapsed_slice_dims=tuple(adv.dims),
                                         start_index_map=tuple(adv.dims))
    sizes = tuple(1 if d in adv.dims else n for d, n in enumerate(region.shape))
    return lax.gather(region, indices, numbers, sizes, mode=mode, fill_value=fill_value)


_SCATTERS = {"set": "scatter", "add": "scatter_add", "multiply": "scatter_mul", "min": "scatter_min",
             "max": "scatter_max"}


def _scatter(x: Any, adv: _Advanced, kind: str, values: Any, mode: str) -> Any:
    """x with ``values`` (of the indexed shape) combined in by the scatter op for ``kind``."""
    region = _oriented_region(x, adv)
    if 0 in adv.out_shape() or any(region.shape[d] == 0 for d in adv.dims):
        return x
    numbers = lax.ScatterDimensionNumbers(update_window_dims=adv.window_dims(),
                                          inserted_window_dims=tuple(adv.dims),
                                          scatter_dims_to_operand_dims=tuple(adv.dims))
    indices = _index_tensor(adv, region.shape, wrap=True)
    new = getattr(lax, _SCATTERS[kind])(region, indices, values, numbers, mode=mode)
    if adv.plan.reversed_dims:
        new = lax.rev(new, tuple(adv.plan.reversed_dims))
    base = lax.reshape(x, adv.expanded) if adv.expanded != x.shape else x
    written = _write_static(base, new, adv.plan)
    return lax.reshape(written, x.shape) if written.shape != x.shape else written


def _is_advanced(kinds: list[str]) -> bool:
    return "advanced" in kinds or "mask" in kinds


def _get(x: Any, index: Any, mode: Any, fill_value: Any) -> Any:
    """``x[index]`` through a gather: mode None promises in-bounds indices (they clamp, and their
    gradient is dropped, as in JAX), after counting negatives from the end."""
    items, kinds = _items(x.shape, index)
    adv = _advanced(x.shape, items, kinds)
    mode = mode_name("get", mode, "promise_in_bounds")
    return with_weak_type(_gather(x, adv, mode, fill_value), x.weak_type)


def _values_like(fname: str, x: Any, values: Any, shape: tuple[int, ...]) -> Any:
    """Update values broadcast to the indexed shape and cast to x's dtype (as JAX's scatter)."""
    values = lax.convert_element_type(asarray(values), x.dtype)
    try:
        return broadcast_to(values, shape)
    except ValueError:
        raise ValueError(f"at[...].{fname}: cannot broadcast update values of shape {values.shape} to "
                         f"the indexed shape {shape}{where()}") from None


def _binary_update(fname: str, lax_op: str | None) -> Callable[..., Any]:
    def method(self: _IndexUpdateRef, values: Any, *, indices_are_sorted: bool = False,
               unique_indices: bool = False, mode: Any = None) -> Any:
        x = asarray(self.array)
        if mode is not None or _is_advanced(_items(x.shape, self.index)[1]):
            return _scatter_update(x, self.index, fname, values, mode)

        def combine(current: Any) -> Any:
            new = _values_like(fname, x, values, current.shape)
            return new if lax_op is None else getattr(lax, lax_op)(current, new)

        return _update(x, self.index, combine, fname)

    method.__name__ = method.__qualname__ = fname
    what = "set to" if lax_op is None else f"combined by lax.{lax_op} with"
    method.__doc__ = f"A new array with ``x[index]`` {what} ``values`` (broadcast, cast to x.dtype)."
    return method


def _scatter_update(x: Any, index: Any, fname: str, values: Any, mode: Any) -> Any:
    """An update through a scatter: every index counts (ints too); mode None drops updates out of
    bounds, and repeated indices combine in order (the last set wins)."""
    items, kinds = _items(x.shape, index)
    adv = _advanced(x.shape, items, kinds)
    values = _values_like(fname, x, values, adv.out_shape())
    kind = {"subtract": "add", "mul": "multiply"}.get(fname, fname)
    if fname == "subtract":
        values = lax.neg(values)
    out = _scatter(x, adv, kind, values, mode_name(f"at[...].{fname}", mode, "fill"))
    return with_weak_type(out, x.weak_type)


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
        """``x[index]``; ``mode`` "fill" reads ``fill_value`` (default NaN, the lowest signed or
        highest unsigned integer, True) out of bounds, "clip" (the default) clamps."""
        if mode is None and fill_value is None:
            return getitem(self.array, self.index)
        _check_python_ints(self.index)
        x = asarray(self.array)
        return _get(x, self.index, mode, fill_value)

    set = _binary_update("set", None)
    add = _binary_update("add", "add")
    subtract = _binary_update("subtract", "sub")
    multiply = _binary_update("multiply", "mul")
    mul = multiply
    min = _binary_update("min", "min")
    max = _binary_update("max", "max")

    def apply(self, func: Callable[[Any], Any], *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None) -> Any:
        """A new array with ``func`` applied to ``x[index]`` (elementwise ``func`` expected). With
        advanced indices it is a gather, ``func``, then a set: a repeated index gets ``func`` once."""
        x = asarray(self.array)
        if mode is not None or _is_advanced(_items(x.shape, self.index)[1]):
            current = _get(x, self.index, mode if mode is not None else "fill", None)
            new = lax.convert_element_type(func(current), x.dtype)
            return _scatter_update(x, self.index, "set", new, mode)
        return _update(x, self.index, lambda current: lax.convert_element_type(func(current), x.dtype),
                       "apply")


class AtIndexer:
    """``x.at``: indexing it gives the update reference for that index."""

    __slots__ = ("array",)

    def __init__(self, array: Any) -> None:
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)


# --- take, take_along_axis ---------------------------------------------------------------------------


def _take_mode(fname: str, mode: Any) -> tuple[str, bool]:
    """The gather mode and whether negative indices count from the end (jnp.take's rules:
    "fill", the default, wraps them; "clip" clamps them to 0; "wrap" takes indices modulo n)."""
    if mode == "wrap":
        return "clip", True
    name = mode_name(fname, "fill" if mode is None else mode, "fill")
    return name, name == "fill"


def take(a: Any, indices: Any, axis: int | None = None, out: None = None, mode: Any = None,
         unique_indices: bool = False, indices_are_sorted: bool = False, fill_value: Any = None) -> Any:
    """``jnp.take``: elements of ``a`` at ``indices`` along ``axis`` (the flattened array if None)."""
    if out is not None:
        raise NotImplementedError(f"take: the 'out' argument is not supported{where()}")
    x = asarray(a)
    if axis is None:
        x, axis = lax.reshape(x, (x.size,)), 0
    axis = operator.index(axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"take: axis {axis} is out of bounds for array of dimension {x.ndim}{where()}")
    axis %= x.ndim
    indices = _index_array(indices)
    if np.dtype(indices.dtype).kind not in "iu":
        raise TypeError(f"take: indices must be integers, got {indices.dtype}{where()}")
    gather_mode, wrap = _take_mode("take", mode)
    if mode == "wrap":
        n = x.shape[axis]
        indices = np.mod(indices, n) if isinstance(indices, np.ndarray) else lax.rem(
            lax.add(lax.rem(indices, n), n), n)
    index = (slice(None),) * axis + (indices,)
    items, kinds = _items(x.shape, index)
    adv = _advanced(x.shape, items, kinds)
    return with_weak_type(_gather(x, adv, gather_mode, fill_value, wrap), x.weak_type)


def take_along_axis(arr: Any, indices: Any, axis: int | None, mode: Any = None,
                    fill_value: Any = None) -> Any:
    """``jnp.take_along_axis``: ``arr`` read at ``indices`` along ``axis``, the other dimensions
    broadcast against each other (an iota index for each of them)."""
    x = asarray(arr)
    indices = _index_array(indices)
    if axis is None:
        x, axis = lax.reshape(x, (x.size,)), 0
    if np.ndim(indices) != x.ndim:
        raise ValueError(f"take_along_axis: indices and arr must have the same number of dimensions, got "
                         f"{np.ndim(indices)} and {x.ndim}{where()}")
    axis = operator.index(axis) % max(x.ndim, 1)
    index = tuple(indices if d == axis else np.arange(n).reshape([-1 if k == d else 1 for k in range(x.ndim)])
                  for d, n in enumerate(x.shape))
    items, kinds = _items(x.shape, index)
    adv = _advanced(x.shape, items, kinds)
    out = _gather(x, adv, mode_name("take_along_axis", mode, "fill"), fill_value)
    return with_weak_type(out, x.weak_type)
