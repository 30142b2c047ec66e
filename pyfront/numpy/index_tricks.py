"""mlax.numpy index helpers: the grid and concatenation objects (mgrid, ogrid, r_, c_, s_,
index_exp), index arrays (ix_, tril/triu/diag/mask indices), conversion between flat and
multi-dimensional indices, and fill_diagonal, as jax.numpy.

Shapes and index sets depend on static arguments only, so the triangle and diagonal indices are
NumPy constants in jnp's default integer type.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax
from mlax.core import abstractify
from mlax.numpy import elementwise as ew
from mlax.numpy import math_extra as mx
from mlax.numpy.creation import arange, linspace, meshgrid, ones
from mlax.numpy.manipulation import concatenate, expand_dims, ravel, stack, tile, transpose
from mlax.numpy.reductions import any as any_
from mlax.numpy.sorting import nonzero
from mlax.numpy.util import array, asarray, check_arraylike, promote_dtypes, user_dtype
from mlax.source_info import where

__all__ = [
    "c_", "diag_indices", "diag_indices_from", "fill_diagonal", "index_exp", "ix_", "mask_indices",
    "mgrid", "ogrid", "r_", "ravel_multi_index", "s_", "tril_indices", "tril_indices_from", "triu_indices",
    "triu_indices_from", "unravel_index",
]

# jnp.s_ and jnp.index_exp are NumPy's objects: they build index tuples, not arrays.
s_ = np.s_
index_exp = np.index_exp


def _grid_axis(s: slice) -> Any:
    """One slice of a grid: ``arange(start, stop, step)``, or ``linspace`` with ``|step|`` points
    (endpoint included) when the step is imaginary."""
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return linspace(start, s.stop, int(abs(step)))
    return arange(start, s.stop, step)


class _Grid:
    """``mgrid`` (dense) and ``ogrid`` (open): a meshgrid of the slices' ranges, indexing "ij"."""

    def __init__(self, sparse: bool) -> None:
        self.sparse = sparse

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _grid_axis(key)
        axes = promote_dtypes(*(_grid_axis(k) for k in key)) if key else []
        grids = meshgrid(*axes, indexing="ij", sparse=self.sparse)
        if self.sparse:
            return grids
        return stack(grids, 0) if grids else arange(0)


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)


class _AxisConcat:
    """``r_`` and ``c_``: items (arrays, scalars, slices as ``_grid_axis``) raised to ``ndmin``
    dimensions and concatenated along ``axis``. A leading string directive is "r", "c" (a row or
    column matrix from a 1-D result) or "axis[,ndmin[,trans1d]]"; ``trans1d`` says where an
    item's own axes go when it gains dimensions (-1: at the end)."""

    def __init__(self, axis: int, ndmin: int, trans1d: int) -> None:
        self.params = (axis, ndmin, trans1d)

    def _directive(self, directive: str) -> tuple[int, int, int, int]:
        if directive in ("r", "c"):
            return (*self.params, 0 if directive == "r" else 1)
        fields = directive.split(",")[:3]
        try:
            return (*map(int, fields), *self.params[len(fields):], -1)
        except ValueError:
            raise ValueError(f"could not understand directive {directive!r}") from None

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        params = (*self.params, -1)
        if items and isinstance(items[0], str):
            params, items = self._directive(items[0]), items[1:]
        axis, ndmin, trans1d, matrix = params
        parts = []
        for item in items:
            if isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            part = _grid_axis(item) if isinstance(item, slice) else array(item, copy=False)
            item_ndim = 0 if isinstance(item, slice) else part.ndim
            part = array(part, copy=False, ndmin=ndmin)
            if trans1d != -1 and ndmin > item_ndim:
                shift = ndmin - abs(ndmin + trans1d + 1) % ndmin
                part = transpose(part, tuple(range(ndmin))[shift:] + tuple(range(ndmin))[:shift])
            parts.append(part)
        out = concatenate(parts, axis=axis)
        return expand_dims(out, matrix) if matrix != -1 and out.ndim == 1 else out

    def __len__(self) -> int:
        return 0


r_ = _AxisConcat(axis=0, ndmin=1, trans1d=-1)
c_ = _AxisConcat(axis=-1, ndmin=2, trans1d=0)


def ix_(*args: Any) -> tuple[Any, ...]:
    """``jnp.ix_``: 1-D index arrays reshaped to broadcast as an open mesh (array ``i`` along axis i)."""
    check_arraylike("ix_", *args)
    out = []
    for i, a in enumerate(asarray(a) for a in args):
        if a.ndim != 1:
            raise ValueError(f"Arguments to mlax.numpy.ix_ must be 1-dimensional, got shape {a.shape}"
                             f"{where()}")
        if a.dtype == np.bool_:
            raise NotImplementedError("Boolean arguments to mlax.numpy.ix_ are not implemented")
        shape = [1] * len(args)
        shape[i] = a.shape[0]
        if a.size == 0:  # jnp builds an empty one in the default integer type
            a = asarray(np.zeros((0,), front_dtypes.default_int()))
        out.append(lax.broadcast_in_dim(a, tuple(shape), (i,)))
    return tuple(out)


def unravel_index(indices: Any, shape: Any) -> tuple[Any, ...]:
    """``jnp.unravel_index``: flat indices as one index per dimension of ``shape`` (C order);
    out-of-range flat indices clamp to the first or last element, as in jax."""
    check_arraylike("unravel_index", indices)
    rest = asarray(indices)
    try:
        dims = list(shape)
    except TypeError:
        dims = [shape]
    if any(np.ndim(d) for d in dims):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    out: list[Any] = [0] * len(dims)
    for i in reversed(range(len(dims))):
        rest, out[i] = ew.divmod(rest, dims[i])
    above = ew.greater(rest, 0)
    below = (asarray(False) if front_dtypes.issubdtype(rest.dtype, np.unsignedinteger)
             else ew.less(rest, -1))
    return tuple(mx.where(above, d - 1, mx.where(below, 0, i)) for d, i in zip(dims, out, strict=True))


_RAVEL_MODES = ("raise", "wrap", "clip", "ignore")


def ravel_multi_index(multi_index: Sequence[Any], dims: Sequence[int], mode: str = "raise",
                      order: str = "C", *, dtype: Any = None) -> Any:
    """``jnp.ravel_multi_index``: one flat index from an index per dimension. ``mode`` "raise"
    checks the bounds (so needs concrete indices), "wrap"/"clip" fold them in, "ignore" trusts them."""
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: len(multi_index)={len(multi_index)} != len(dims)={len(dims)}"
                         f"{where()}")
    dims = tuple(operator.index(d) for d in dims)
    check_arraylike("ravel_multi_index", *multi_index)
    indices = [asarray(i) for i in multi_index]
    if dtype is None:
        dtype = front_dtypes.result_type(int, *indices)
    else:
        dtype = user_dtype("ravel_multi_index", dtype)
    if not front_dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"ravel_multi_index: dtype={dtype} is not an integer type.")
    if math.prod(dims) - 1 > np.iinfo(dtype).max:
        raise ValueError(f"ravel_multi_index: dtype={dtype} not large enough to hold flattened index for "
                         f"dims={dims}. Use the dtype argument to pass a suitable dtype.")
    if mode not in _RAVEL_MODES:
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
    if order not in ("C", "F"):
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    if any(not front_dtypes.issubdtype(i.dtype, np.integer) for i in indices):
        raise TypeError("only int indices permitted")
    if mode == "raise":
        if any(bool(any_(ew.logical_or(ew.less(i, 0), ew.greater_equal(i, d))))
               for i, d in zip(indices, dims, strict=True)):
            raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        indices = [mx.clip(i, 0, d - 1) for i, d in zip(indices, dims, strict=True)]
    elif mode == "wrap":
        indices = [ew.remainder(i, d) for i, d in zip(indices, dims, strict=True)]
    strides = np.cumprod((1,) + dims[:-1]) if order == "F" else np.cumprod((1,) + dims[1:][::-1])[::-1]
    out = asarray(np.zeros((), dtype))
    for i, stride in zip(indices, strides, strict=True):
        out = ew.add(out, ew.multiply(lax.convert_element_type(i, dtype), int(stride)))
    return out


def _index_constant(values: np.ndarray) -> Any:
    """Static indices in jnp's default integer type (as ``nonzero`` returns them)."""
    return asarray(values.astype(front_dtypes.default_int()))


def _triangle_indices(lower: bool) -> Callable[..., tuple[Any, Any]]:
    numpy_fn = np.tril_indices if lower else np.triu_indices
    name = numpy_fn.__name__

    def fn(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
        n, k = operator.index(n), operator.index(k)
        m = n if m is None else operator.index(m)
        return tuple(_index_constant(i) for i in numpy_fn(n, k, m))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``jnp.{name}``: row and column indices of the {'lower' if lower else 'upper'} triangle."
    return fn


def _triangle_indices_from(name: str, indices_fn: Callable[..., tuple[Any, Any]]) -> Callable[..., Any]:
    def fn(arr: Any, k: int = 0) -> tuple[Any, Any]:
        shape = arr.shape if hasattr(arr, "shape") else abstractify(asarray(arr)).shape
        if len(shape) != 2:
            raise ValueError("Only 2-D inputs are accepted")
        return indices_fn(shape[0], k=k, m=shape[1])

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``jnp.{name}``: ``{indices_fn.__name__}`` for the shape of a 2-D ``arr``."
    return fn


tril_indices = _triangle_indices(lower=True)
triu_indices = _triangle_indices(lower=False)
tril_indices_from = _triangle_indices_from("tril_indices_from", tril_indices)
triu_indices_from = _triangle_indices_from("triu_indices_from", triu_indices)


def mask_indices(n: int, mask_func: Callable[[Any, int], Any], k: int = 0, *,
                 size: int | None = None) -> tuple[Any, Any]:
    """``jnp.mask_indices``: the indices where ``mask_func(ones((n, n)), k)`` is nonzero."""
    i, j = nonzero(mask_func(ones((n, n)), k), size=size)
    return i, j


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    """``jnp.diag_indices``: ``ndim`` copies of ``arange(n)``, indexing the main diagonal."""
    n, ndim = operator.index(n), operator.index(ndim)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    dtype = np.int64 if n > np.iinfo(np.int32).max else front_dtypes.default_int()
    return (lax.iota(dtype, n),) * ndim


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    """``jnp.diag_indices_from``: ``diag_indices`` for an array with all dimensions equal."""
    check_arraylike("diag_indices_from", arr)
    shape = abstractify(arr).shape
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], ndim=len(shape))


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    """``jnp.fill_diagonal`` (functional form, ``inplace=False``): ``a`` with its main diagonal set
    to ``val`` (a scalar, or values repeated to the diagonal's length)."""
    if inplace:
        raise NotImplementedError("mlax arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    check_arraylike("fill_diagonal", a, val)
    a, val = asarray(a), asarray(val)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = min(a.shape)
    return a.at[diag_indices(n, a.ndim)].set(val if val.ndim == 0 else tile_to_size(ravel(val), n))


def tile_to_size(x: Any, size: int) -> Any:
    """A 1-D ``x`` repeated and cut to ``size`` elements (jnp's ``_tile_to_size``)."""
    if 0 < x.shape[0] < size:
        x = tile(x, -(-size // x.shape[0]))
    return x[:size] if x.shape[0] > size else x
