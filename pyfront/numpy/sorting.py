"""mlax.numpy sorting and searching: sort, argsort, lexsort, searchsorted, unique, nonzero and
its relatives (as jax.numpy), on mlax.lax.sort.

Data-dependent sizes (nonzero, unique) take jnp's static ``size=`` (and ``fill_value=``);
without it they run eagerly only. Their results are compacted without a gather: a stable
sort of the "not selected" mask moves the selected positions to the front in order, and
the first ``size`` are kept (positions past the count read position 0, then the fill).
searchsorted counts the elements of the sorted array that precede each value in the sort
order (NaN last, -0.0 == 0.0), which is what jnp's binary search returns.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax
from mlax.core import abstractify
from mlax.errors import ConcretizationTypeError
from mlax.numpy import elementwise as ew
from mlax.numpy import math_extra as mx
from mlax.numpy.manipulation import ravel
from mlax.numpy.reductions import cumsum
from mlax.numpy.reductions import sum as sum_
from mlax.numpy.util import asarray, check_arraylike, concrete, normalize_axis, promote_dtypes

__all__ = ["argsort", "argwhere", "flatnonzero", "lexsort", "nonzero", "searchsorted", "sort", "unique"]


def _flat_or_axis(fname: str, a: Any, axis: int | None) -> tuple[Any, int]:
    check_arraylike(fname, a)
    a = asarray(a)
    if axis is None:
        return ravel(a), 0
    if a.ndim == 0:
        raise ValueError(f"mlax.numpy.{fname}: an axis needs an array of rank at least 1")
    return a, normalize_axis(f"mlax.numpy.{fname}", axis, a.ndim)


def sort(a: Any, axis: int | None = -1, *, kind: None = None, order: None = None, stable: bool = True,
         descending: bool = False) -> Any:
    """A sorted copy of ``a`` along ``axis`` (flattened for None); NaN last, descending reverses."""
    if order is not None:
        raise ValueError("mlax.numpy.sort: 'order' is not supported")
    arr, dimension = _flat_or_axis("sort", a, axis)
    result = lax.sort(arr, dimension=dimension, is_stable=stable)
    return lax.rev(result, (dimension,)) if descending else result


def argsort(a: Any, axis: int | None = -1, *, kind: None = None, order: None = None, stable: bool = True,
            descending: bool = False, dtype: Any = None) -> Any:
    """The indices that sort ``a`` along ``axis``; a stable descending sort keeps ties in order
    (jnp reverses the array and the indices around the sort)."""
    if order is not None:
        raise ValueError("mlax.numpy.argsort: 'order' is not supported")
    arr, dimension = _flat_or_axis("argsort", a, axis)
    index_dtype = front_dtypes.canonicalize(int if dtype is None else dtype)
    iota = lax.broadcasted_iota(index_dtype, arr.shape, dimension)
    if descending and stable:
        arr, iota = lax.rev(arr, (dimension,)), lax.rev(iota, (dimension,))
    _, indices = lax.sort_key_val(arr, iota, dimension=dimension, is_stable=stable)
    return lax.rev(indices, (dimension,)) if descending else indices


def lexsort(keys: Any, axis: int = -1) -> Any:
    """The indices that sort by the last key, then the one before, ... (stable)."""
    keys = [asarray(k) for k in keys]
    if not keys:
        raise TypeError("mlax.numpy.lexsort: need at least one key")
    shape = keys[0].shape
    if builtins.any(k.shape != shape for k in keys) or not shape:
        raise ValueError("mlax.numpy.lexsort: all keys need the same shape, of rank at least 1")
    dimension = normalize_axis("mlax.numpy.lexsort", axis, len(shape))
    iota = lax.broadcasted_iota(front_dtypes.canonicalize(int), shape, dimension)
    return lax.sort((*keys[::-1], iota), dimension=dimension, num_keys=len(keys))[-1]


def _sort_less(x: Any, y: Any) -> Any:
    """x < y in the sort order: floats with NaN last (and -0.0 == 0.0)."""
    if not front_dtypes.issubdtype(abstractify(x).dtype, np.inexact):
        return ew.less(x, y)
    return ew.logical_or(ew.less(x, y), ew.logical_and(ew.logical_not(mx.isnan(x)), mx.isnan(y)))


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *, method: str = "scan") -> Any:
    """Where to insert ``v`` into the sorted 1-d ``a`` (before equal elements for side "left",
    after them for "right"), as int32: the number of elements of ``a`` that precede."""
    check_arraylike("searchsorted", a, v)
    if side not in ("left", "right"):
        raise ValueError(f"mlax.numpy.searchsorted: side must be 'left' or 'right', got {side!r}")
    a, v = promote_dtypes(asarray(a), asarray(v))
    if a.ndim != 1:
        raise ValueError("mlax.numpy.searchsorted: a should be 1-dimensional")
    if sorter is not None:
        a = lax.apply_permutation(a, lax.convert_element_type(asarray(sorter), np.int32), 0)
    rows = lax.broadcast_in_dim(a, (*v.shape, a.shape[0]), (v.ndim,))
    values = lax.broadcast_in_dim(v, (*v.shape, a.shape[0]), tuple(range(v.ndim)))
    before = _sort_less(rows, values) if side == "left" else ew.logical_not(_sort_less(values, rows))
    return sum_(before, axis=-1, dtype=np.int32)


def concrete_without_size(fname: str, x: Any) -> np.ndarray:
    """The value of ``x``, which sizes ``fname``'s result when no ``size=`` is given; traced, JAX's
    ConcretizationTypeError naming ``fname`` and the ``size`` argument (the error itself is
    re-raised, so that a concrete retrace still recognises it)."""
    try:
        return concrete(x)
    except ConcretizationTypeError as err:
        err.args = (f"{err.args[0]}\nThe error arose in mlax.numpy.{fname}(). To make {fname}() compatible "
                    "with JIT and other transforms, specify a concrete value for the size argument, which "
                    "will determine the output size.", *err.args[1:])
        raise


def _size(fname: str, mask: Any, size: int | None) -> int:
    return int(size) if size is not None else int(concrete_without_size(fname, sum_(mask)))


def _compact(mask: Any, size: int) -> tuple[Any, Any]:
    """The order that moves the true elements of the 1-d ``mask`` to the front (stably), and
    whether each of the first ``size`` places holds one."""
    count = lax.convert_element_type(sum_(mask, dtype=np.int32), np.int32)
    valid = ew.less(lax.iota(np.int32, size), count)
    return lax.sort_permutation(ew.logical_not(mask), 0), valid


def _take(x: Any, order: Any, valid: Any, size: int) -> Any:
    """``x`` read in ``order``, its first ``size`` elements (jnp's ``x[nonzero(mask, size)]``:
    the places past the count read element 0)."""
    n = x.shape[0]
    moved = lax.apply_permutation(x, order, 0)
    moved = lax.slice_in_dim(moved, 0, size) if size <= n else lax.pad(moved, asarray(np.zeros((), x.dtype)),
                                                                        [(0, size - n, 0)])
    first = lax.broadcast_in_dim(lax.slice_in_dim(x, 0, 1), (size,), (0,))
    return mx.where(valid, moved, first)


def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    """The indices of the nonzero elements, one array per dimension (C order); with ``size``,
    truncated or padded with 0 (or ``fill_value``, a scalar or one per dimension)."""
    check_arraylike("nonzero", a)
    arr = asarray(a)
    if arr.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() "
                         "instead.")
    mask = ravel(arr if arr.dtype == np.bool_ else ew.not_equal(arr, 0))
    size = _size("nonzero", mask, size)
    index_dtype = front_dtypes.canonicalize(int)
    if mask.shape[0] == 0 or size == 0:
        return tuple(asarray(np.zeros(size, index_dtype)) for _ in arr.shape)
    order, valid = _compact(mask, size)
    positions = _take(lax.iota(np.int32, mask.shape[0]), order, valid, size)
    strides = [math.prod(arr.shape[d + 1:]) for d in range(arr.ndim)]
    fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * arr.ndim
    out = []
    for stride, n, fill in zip(strides, arr.shape, fills, strict=True):
        coord = lax.convert_element_type(positions, index_dtype)
        coord = ew.remainder(ew.floor_divide(coord, stride), n) if n else coord
        out.append(coord if fill is None else mx.where(valid, coord, asarray(fill, index_dtype)))
    return tuple(out)


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of the nonzero elements of the flattened ``a``."""
    return nonzero(ravel(asarray(a)), size=size, fill_value=fill_value)[0]


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of the nonzero elements as rows of an (n, ndim) array."""
    arr = asarray(a)
    columns = nonzero(lax.reshape(arr, (1,)) if arr.ndim == 0 else arr, size=size, fill_value=fill_value)
    if arr.ndim == 0:
        return asarray(np.zeros((columns[0].shape[0], 0), columns[0].dtype))
    return lax.concatenate([lax.expand_dims(c, (1,)) for c in columns], 1)


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: int | None = None, *, equal_nan: bool = True, size: int | None = None,
           fill_value: Any = None, sorted: bool = True) -> Any:
    """The sorted unique elements of the flattened ``ar`` (NaNs one element if ``equal_nan``),
    optionally with the first index of each, the inverse and the counts, as jnp.unique; with
    ``size``, padded with the smallest element (or ``fill_value``)."""
    check_arraylike("unique", ar)
    if axis is not None:
        raise NotImplementedError("mlax.numpy.unique: only axis=None (the flattened array) is supported")
    arr = asarray(ar)
    flat = ravel(arr)
    if size is None:  # jnp asks for the input itself first
        concrete_without_size("unique", flat)
    n = flat.shape[0]
    if n == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, fill_value must be "
                         "specified")
    index_dtype = front_dtypes.canonicalize(int)
    perm = argsort(flat, stable=True)
    perm32 = lax.convert_element_type(perm, np.int32)
    aux = lax.apply_permutation(flat, perm32, 0)
    if n:
        later, earlier = lax.slice_in_dim(aux, 1, n), lax.slice_in_dim(aux, 0, n - 1)
        differ = ew.not_equal(later, earlier)
        if equal_nan and front_dtypes.issubdtype(aux.dtype, np.inexact):
            both_nan = ew.logical_and(mx.isnan(later), mx.isnan(earlier))
            differ = ew.logical_and(differ, ew.logical_not(both_nan))
        mask = lax.concatenate([asarray(np.ones(1, bool)), differ], 0)
    else:
        mask = asarray(np.zeros(0, bool))
    size = _size("unique", mask, size)
    if n == 0:
        result = lax.broadcast_in_dim(asarray(np.zeros((), aux.dtype)), (size,), ())
        order, valid = None, asarray(np.zeros(size, bool))
    else:
        order, valid = _compact(mask, size)
        result = _take(aux, order, valid, size)
    if fill_value is not None:
        result = mx.where(valid, result, asarray(fill_value).astype(result.dtype))
    out = [result]
    if return_index:
        out.append(_take(perm, order, valid, size) if n else perm)
    if return_inverse:
        inverse = ew.subtract(cumsum(mask, dtype=index_dtype), 1) if n else asarray(np.zeros(0, index_dtype))
        if n:  # inverse[perm] = inverse in sorted order: read it by the inverse permutation
            inverse = lax.apply_permutation(inverse, lax.sort_permutation(perm32, 0), 0)
        out.append(lax.reshape(inverse, arr.shape))
    if return_counts:
        out.append(_counts(mask, size, n, index_dtype))
    return out[0] if len(out) == 1 else tuple(out)


def _counts(mask: Any, size: int, n: int, index_dtype: np.dtype) -> Any:
    """How often each unique element occurs: the gaps between the starts of the runs, jnp's
    ``diff`` of the ``size + 1`` starts with the places past the count set to ``n``."""
    if n == 0:
        return asarray(np.zeros(size, index_dtype))
    order, valid = _compact(mask, size + 1)
    starts = _take(lax.iota(index_dtype, n), order, valid, size + 1)
    ends = mx.where(valid, starts, asarray(n, index_dtype))
    return ew.subtract(lax.slice_in_dim(ends, 1, size + 1), lax.slice_in_dim(ends, 0, size))
