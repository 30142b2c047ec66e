"""mlax.numpy selection by index or condition: put, put_along_axis, place (functional forms,
``inplace=False``), extract, compress, choose, delete, piecewise, partition and argpartition,
as jax.numpy.

Writes are scatters through ``.at[...]``; data-dependent output shapes (compress, extract and
delete without ``size``, choose with ``mode="raise"``) need concrete inputs, as in jax.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax
from mlax.numpy import elementwise as ew
from mlax.numpy import math_extra as mx
from mlax.numpy.creation import arange, indices, ones, zeros_like
from mlax.numpy.index_tricks import tile_to_size, unravel_index
from mlax.numpy.manipulation import (
    broadcast_arrays,
    broadcast_to,
    concatenate,
    expand_dims,
    moveaxis,
    ravel,
    reshape,
    stack,
    swapaxes,
)
from mlax.numpy.reductions import any as any_
from mlax.numpy.reductions import argmax, cumsum
from mlax.numpy.sorting import argsort, sort
from mlax.numpy.util import asarray, check_arraylike, concrete, normalize_axis
from mlax.numpy.vectorize import vectorize

__all__ = ["argpartition", "choose", "compress", "delete", "extract", "partition", "piecewise", "place",
           "put", "put_along_axis"]


def _no_inplace(fname: str, inplace: bool) -> None:
    if inplace:
        raise ValueError(f"mlax.numpy.{fname} cannot modify arrays in-place, because mlax arrays are "
                         "immutable. Pass inplace=False to instead return an updated array.")


_PUT_MODES = {None: "drop", "clip": "promise_in_bounds", "wrap": "promise_in_bounds"}


def put(a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True) -> Any:
    """``jnp.put``: ``a`` with the flat positions ``ind`` set to ``v`` (repeated as needed);
    ``mode`` None drops out-of-range indices, "clip" and "wrap" fold them in."""
    _no_inplace("put", inplace)
    check_arraylike("put", a, ind, v)
    arr, ind, v = asarray(a), ravel(ind), ravel(v)
    if not (arr.size and ind.size and v.size):
        return arr
    if mode == "raise":
        raise NotImplementedError("The 'raise' mode to mlax.numpy.put is not supported.")
    if mode not in _PUT_MODES:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    if mode == "clip":
        ind = mx.clip(ind, 0, arr.size - 1)
    elif mode == "wrap":
        ind = ew.remainder(ind, arr.size)
    return arr.at[unravel_index(ind, arr.shape)].set(tile_to_size(v, ind.shape[0]), mode=_PUT_MODES[mode])


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None, inplace: bool = True, *,
                   mode: str | None = None) -> Any:
    """``jnp.put_along_axis``: ``arr`` with ``values`` written at ``indices`` along ``axis`` (the
    other axes matched position by position, as ``take_along_axis`` reads them)."""
    _no_inplace("put_along_axis", inplace)
    check_arraylike("put_along_axis", arr, indices, values)
    arr, index, values = asarray(arr), asarray(indices), asarray(values)
    shape = arr.shape
    if axis is None:
        arr, axis = ravel(arr), 0
    if arr.ndim != index.ndim:
        raise ValueError(f"put_along_axis arguments 'arr' and 'indices' must have same ndim. Got "
                         f"arr.ndim={arr.ndim} and indices.ndim={index.ndim}.")
    try:
        values = broadcast_to(values, index.shape)
    except ValueError:
        raise ValueError(f"put_along_axis argument 'values' must be broadcastable to 'indices'. Got "
                         f"values.shape={values.shape} and indices.shape={index.shape}.") from None
    axis = normalize_axis("put_along_axis", axis, arr.ndim)
    grid = list(np.ix_(*(np.arange(n) for n in arr.shape))) if arr.ndim else []
    grid[axis] = index
    return reshape(arr.at[tuple(grid)].set(values, mode=mode), shape)


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Any:
    """``jnp.place``: ``arr`` with the positions where ``mask`` holds set to ``vals`` in order
    (repeated as needed)."""
    check_arraylike("place", arr, mask, vals)
    data, mask, vals = asarray(arr), asarray(mask), ravel(vals)
    _no_inplace("place", inplace)
    if data.size != mask.size:
        raise ValueError("place: arr and mask must be the same size")
    if not vals.size:
        raise ValueError("Cannot place values from an empty array")
    if not data.size:
        return data
    (positions,) = mx.where(ravel(mask), size=mask.size, fill_value=mask.size)
    new = ravel(data).at[positions].set(tile_to_size(vals, positions.shape[0]), mode="drop")
    return reshape(new, data.shape)


def compress(condition: Any, a: Any, axis: int | None = None, *, size: int | None = None,
             fill_value: Any = 0, out: None = None) -> Any:
    """``jnp.compress``: the slices of ``a`` along ``axis`` where ``condition`` holds. Without
    ``size`` the condition must be concrete; with it, the kept slices come first and
    ``fill_value`` pads the rest."""
    check_arraylike("compress", condition, a, fill_value)
    cond = mx.astype(asarray(condition), bool)
    if out is not None:
        raise NotImplementedError("The 'out' argument to mlax.numpy.compress is not supported.")
    if cond.ndim != 1:
        raise ValueError("condition must be a 1D array")
    arr = ravel(a) if axis is None else moveaxis(asarray(a), axis, 0)
    axis = 0 if axis is None else axis
    cond, extra = cond[:arr.shape[0]], cond[arr.shape[0]:]
    arr = arr[:cond.shape[0]]
    if size is None:
        if bool(any_(extra)):
            raise ValueError("condition contains entries that are out of bounds")
        result = arr[concrete(cond)]
    elif not 0 <= size <= arr.shape[0]:
        raise ValueError("size must be positive and not greater than the size of the array axis; got "
                         f"size={size} for a.shape[axis]={arr.shape[0]}")
    else:
        arr = mx.where(expand_dims(cond, tuple(range(1, arr.ndim))), arr, asarray(fill_value, arr.dtype))
        result = arr[argsort(cond, stable=True, descending=True)][:size]
    return moveaxis(result, 0, axis)


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0) -> Any:
    """``jnp.extract``: the elements of ``arr`` where ``condition`` holds, both flattened."""
    check_arraylike("extract", condition, arr, fill_value)
    return compress(ravel(condition), ravel(arr), size=size, fill_value=fill_value)


_CHOOSE_MODES = ("raise", "wrap", "clip")


def choose(a: Any, choices: Any, out: None = None, mode: str = "raise") -> Any:
    """``jnp.choose``: ``choices[a[i]][i]`` for every position ``i`` of the broadcast operands."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to mlax.numpy.choose is not supported.")
    check_arraylike("choose", a, *choices)
    a, choices = asarray(a), [asarray(c) for c in choices]
    if not front_dtypes.issubdtype(a.dtype, np.integer):
        raise ValueError("`a` array must be integer typed")
    n = len(choices)
    if mode not in _CHOOSE_MODES:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    if mode == "raise":
        picks = concrete(a)
        if np.any((picks < 0) | (picks >= n)):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = ew.remainder(a, n)
    else:
        a = mx.clip(a, 0, n - 1)
    a, *choices = broadcast_arrays(a, *choices)
    return stack(choices)[(a, *indices(a.shape, sparse=True))]


def delete(arr: Any, obj: Any, axis: int | None = None, *, assume_unique_indices: bool = False) -> Any:
    """``jnp.delete``: ``arr`` without the entries ``obj`` (an index, slice, index array or boolean
    mask) along ``axis``. Index arrays must be concrete unless ``assume_unique_indices``."""
    check_arraylike("delete", arr)
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis("delete", axis, a.ndim)
    lead = (slice(None),) * axis
    try:
        index = operator.index(obj)
    except TypeError:
        pass
    else:
        index = normalize_axis("delete", index, a.shape[axis])
        return concatenate([a[(*lead, slice(0, index))], a[(*lead, slice(index + 1, None))]], axis=axis)
    if isinstance(obj, slice):
        obj, assume_unique_indices = arange(a.shape[axis])[obj], True
    check_arraylike("delete", a, obj)
    n = a.shape[axis]
    if assume_unique_indices and front_dtypes.issubdtype(asarray(obj).dtype, np.integer):
        gone = ravel(obj)
        gone = sort(mx.clip(mx.where(ew.less(gone, 0), ew.add(gone, n), gone), 0, n))
        gone = ew.subtract(gone, arange(gone.shape[0], dtype=gone.dtype))
        kept = arange(n - gone.shape[0], dtype=gone.dtype)
        shift = lax.reduce_sum(lax.convert_element_type(ew.greater_equal(kept[None, :], gone[:, None]),
                                                        gone.dtype), (0,))
        return a[(*lead, ew.add(kept, shift))]
    gone = concrete(obj)
    if gone.dtype.kind in "iu":
        mask = np.ones(n, dtype=bool)
        mask[gone] = False
    elif gone.dtype == np.bool_:
        if gone.shape != (n,):
            raise ValueError("np.delete(arr, obj): for boolean indices, obj must be one-dimensional with "
                             "length matching specified axis.")
        mask = ~gone
    else:
        raise ValueError(f"np.delete(arr, obj): got obj.dtype={gone.dtype}; must be integer or bool.")
    return a[(*lead, mask)]


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Any:
    """``jnp.piecewise``: ``funclist[i]`` (a function of each scalar element, or a constant) where
    ``condlist[i]`` is the first true condition; an extra last entry is the default (else 0)."""
    check_arraylike("piecewise", x)
    x = asarray(x)
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funclist = [funclist[-1], *funclist[:-1]]
    elif nf == nc:
        funclist = [0, *funclist]
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}")
    conds = asarray(condlist, dtype=bool)
    branch = argmax(cumsum(concatenate([zeros_like(conds[:1]), conds], 0), 0), 0)
    dtype = x.dtype

    def as_branch(f: Any) -> Callable[[Any], Any]:
        if callable(f):
            return lambda v: mx.astype(f(v, *args, **kw), dtype)
        return lambda v: asarray(f, dtype=dtype)

    return vectorize(lax.switch, excluded=(1,))(branch, [as_branch(f) for f in funclist], x)


def _smallest_first(x: Any) -> Any:
    """A key whose largest values are ``x``'s smallest (unsigned values wrap: ``-(x + 1)``)."""
    if front_dtypes.issubdtype(x.dtype, np.unsignedinteger):
        return ew.negative(ew.add(x, 1))
    return ew.negative(x)


def _partition_setup(fname: str, a: Any, kth: int, axis: int) -> tuple[Any, int, int]:
    check_arraylike(fname, a)
    arr = asarray(a)
    axis = normalize_axis(fname, axis, arr.ndim)
    kth = normalize_axis(fname, kth, arr.shape[axis])
    return swapaxes(arr, axis, -1), kth, axis


def partition(a: Any, kth: int, axis: int = -1) -> Any:
    """``jnp.partition``: along ``axis``, the ``kth + 1`` smallest values in ascending order,
    then the rest in descending order (as jax's two top_k calls produce them)."""
    arr, kth, axis = _partition_setup("partition", a, kth, axis)
    bottom = _smallest_first(lax.top_k(_smallest_first(arr), kth + 1)[0])
    top = lax.top_k(arr, arr.shape[-1] - kth - 1)[0]
    return swapaxes(lax.concatenate([bottom, top], arr.ndim - 1), -1, axis)


def argpartition(a: Any, kth: int, axis: int = -1) -> Any:
    """``jnp.argpartition``: the indices that ``partition`` would move to each position."""
    arr, kth, axis = _partition_setup("argpartition", a, kth, axis)
    bottom = lax.top_k(_smallest_first(arr), kth + 1)[1]
    rest = put_along_axis(ones(arr.shape), bottom, 0.0, axis=-1, inplace=False)  # 1 where not taken
    top = lax.top_k(rest, arr.shape[-1] - kth - 1)[1]
    return swapaxes(lax.concatenate([bottom, top], arr.ndim - 1), -1, axis)
