"""mlax.numpy array creation: filled arrays, ranges, identity-like matrices and triangles.

Filled arrays are one scalar broadcast to the shape; ranges and masks are built from
``lax.broadcasted_iota`` so that traced programs hold a few ops rather than big literals.
Dtype and weak-type rules are jnp's: ``zeros`` and friends default to the default float
type, ``full``/``*_like`` keep a weakly typed fill value (or array) weak, ``arange`` takes
the promoted type of its arguments.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax
from mlax.array import Array
from mlax.core import Tracer, abstractify, is_array_like, to_numpy
from mlax.numpy import elementwise as ew
from mlax.numpy.dtypes import finfo
from mlax.numpy.manipulation import diagonal, stack
from mlax.numpy.math_extra import astype
from mlax.numpy.util import (
    array,
    asarray,
    broadcast_to_shape,
    check_arraylike,
    to_inexact_dtype,
    user_dtype,
)
from mlax.source_info import where

__all__ = [
    "arange", "array", "asarray", "copy", "diag", "diagflat", "empty", "empty_like", "eye", "full",
    "full_like", "geomspace", "identity", "indices", "linspace", "logspace", "meshgrid", "ones",
    "ones_like", "tri", "tril", "triu", "zeros", "zeros_like",
]


def _shape(fname: str, shape: Any) -> tuple[int, ...]:
    """A static shape from an int or a sequence of ints (negative sizes are an error)."""
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    if type(shape) in (np.ndarray, Array) and np.ndim(shape) == 1:  # an array of sizes, as jax takes
        dims = tuple(np.asarray(shape))
    out = []
    for d in dims:
        if isinstance(d, Tracer):
            raise TypeError(f"mlax.numpy.{fname}: shapes must be static integers, got a traced value"
                            f"{where()}")
        try:
            out.append(operator.index(d))
        except TypeError:
            raise TypeError(f"mlax.numpy.{fname}: shape must be integers, got {shape!r}{where()}") from None
    if any(d < 0 for d in out):
        raise TypeError(f"mlax.numpy.{fname}: negative dimensions are not allowed, got {tuple(out)}"
                         f"{where()}")
    return tuple(out)


def _fill(fname: str, shape: tuple[int, ...], fill_value: Any, dtype: np.dtype | None, weak: bool) -> Any:
    """``fill_value`` converted to ``dtype`` and broadcast to ``shape`` (jnp's ``lax.full``)."""
    check_arraylike(fname, fill_value)
    if abstractify(fill_value).shape:
        value = asarray(fill_value, dtype=dtype)
        return broadcast_to_shape(value, shape)
    if dtype is None:
        dtype = abstractify(fill_value).dtype
    scalar = lax.convert_element_type(fill_value, dtype, weak_type=weak)
    return lax.broadcast_in_dim(scalar, shape, ())


def _is_weak(x: Any) -> bool:
    return bool(abstractify(x).weak_type)


def full(shape: Any, fill_value: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """An array of ``shape`` filled with ``fill_value`` (a scalar, or an array that broadcasts)."""
    dtype = user_dtype("full", dtype)
    weak = dtype is None and _is_weak(fill_value)
    return _fill("full", _shape("full", shape), fill_value, dtype, weak)


def _filled(name: str, value: int) -> Any:
    def fn(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
        dt = user_dtype(name, dtype) or front_dtypes.default_float()
        return _fill(name, _shape(name, shape), value, dt, False)

    return ew._named(name, f"An array of ``shape`` filled with {value} (default float dtype).", fn)


zeros = _filled("zeros", 0)
ones = _filled("ones", 1)
empty = _filled("empty", 0)


def _like(fname: str, a: Any) -> tuple[tuple[int, ...], np.dtype, bool]:
    """The shape, dtype and weak type of ``a``: an array or scalar, or -- as jax's duck typing --
    anything with ``.shape`` and ``.dtype`` (a ``ShapeDtypeStruct``, from ``eval_shape``), whose
    dtype is canonicalized as a user's and which is never weak."""
    if not is_array_like(a) and hasattr(a, "shape") and hasattr(a, "dtype"):
        return tuple(_shape(fname, a.shape)), front_dtypes.canonicalize(np.dtype(a.dtype)), False
    check_arraylike(fname, a)
    aval = abstractify(a)
    return aval.shape, aval.dtype, bool(aval.weak_type)


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    """An array like ``a`` (its dtype and weak type, unless given) filled with ``fill_value``;
    ``a`` may be any object with ``.shape`` and ``.dtype`` (a ``ShapeDtypeStruct``)."""
    return _full_like("full_like", a, fill_value, dtype, shape)


def _full_like(fname: str, a: Any, fill_value: Any, dtype: Any, shape: Any) -> Any:
    like_shape, like_dtype, like_weak = _like(fname, a)
    dtype = user_dtype(fname, dtype)
    target_shape = like_shape if shape is None else _shape(fname, shape)
    weak = dtype is None and like_weak
    return _fill(fname, target_shape, fill_value, dtype or like_dtype, weak)


def _filled_like(name: str, value: int) -> Any:
    def fn(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
        return _full_like(name, a, value, dtype, shape)

    return ew._named(name, f"An array like ``a`` (or an object with ``.shape`` and ``.dtype``) filled "
                           f"with {value}.", fn)


zeros_like = _filled_like("zeros_like", 0)
ones_like = _filled_like("ones_like", 1)
empty_like = _filled_like("empty_like", 0)


def _concrete_scalar(name: str, value: Any) -> Any:
    """A concrete scalar argument of arange (a traced one cannot size the result)."""
    if isinstance(value, Tracer):  # known under grad outside jit (concrete mode); else JAX's error
        value = value._concrete("value", context=f"It arose in the mlax.numpy.arange argument '{name}'")[()]
    if np.ndim(to_numpy(value) if hasattr(value, "aval") else value) != 0:
        raise ValueError(f"mlax.numpy.arange: arguments must be scalars; got {name}={value!r}{where()}")
    return value.item() if hasattr(value, "aval") else value


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None, *, device: Any = None) -> Any:
    """Evenly spaced values in ``[start, stop)``; the dtype is the promoted type of the arguments."""
    dt = user_dtype("arange", dtype)
    if dt is None:
        dt = front_dtypes.result_type(*(v for v in (start, stop, step) if v is not None))
    start = _concrete_scalar("stop" if stop is None and step is None else "start", start)
    stop = None if stop is None else _concrete_scalar("stop", stop)
    step = None if step is None else _concrete_scalar("step", step)
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ZeroDivisionError(f"mlax.numpy.arange: step must not be zero{where()}")
    if step is not None:
        small_float = front_dtypes.issubdtype(dt, np.floating) and dt.itemsize < 4
        work = np.dtype(np.float32) if small_float else dt
        size = max(0, math.ceil((stop - start) / step))
        ramp = lax.mul(_scalar_as(step, work, size), lax.iota(work, size))
        return lax.convert_element_type(lax.add(_scalar_as(start, work, size), ramp), dt)
    size = max(0, math.ceil(stop - start))
    ramp = lax.iota(dt, size)
    if start == 0:
        return ramp
    return lax.add(_scalar_as(start, dt, size), ramp)


def _scalar_as(value: Any, dtype: np.dtype, size: int) -> Any:
    """A concrete scalar converted to ``dtype`` (as lax does) and broadcast to a vector."""
    return lax.broadcast_in_dim(lax.convert_element_type(value, dtype), (size,), ())


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: Any = None, axis: int = 0, *, device: Any = None) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` (arrays give one ramp per element,
    stacked along ``axis``); integer dtypes take the floor."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"mlax.numpy.linspace: number of samples, {num}, must be non-negative{where()}")
    check_arraylike("linspace", start, stop)
    dt = user_dtype("linspace", dtype) or to_inexact_dtype(front_dtypes.result_type(start, stop))
    work = to_inexact_dtype(dt)
    start, stop = astype(start, work), astype(stop, work)
    bounds = tuple(np.broadcast_shapes(start.shape, stop.shape))
    start, stop = broadcast_to_shape(start, bounds), broadcast_to_shape(stop, bounds)
    axis = operator.index(axis)
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    with_axis = bounds[:axis] + (1,) + bounds[axis:]
    div = num - 1 if endpoint else num
    if num > 1:
        # jnp divides by ``div``; XLA turns a division by a constant into a product with the
        # reciprocal, so jax's values are those of the product (which we compute).
        real = np.dtype(finfo(work).dtype)
        delta = ew.multiply(ew.subtract(stop, start), asarray(1 / div, dtype=work))
        ramp_shape = tuple(div if d == axis else 1 for d in range(len(with_axis)))
        ramp = ew.multiply(lax.reshape(lax.iota(real, div), ramp_shape), asarray(1 / div, dtype=real))
        ramp = lax.convert_element_type(ramp, work)
        out = ew.add(ew.multiply(lax.reshape(start, with_axis), ew.subtract(1, ramp)),
                     ew.multiply(lax.reshape(stop, with_axis), ramp))
        if endpoint:
            out = lax.concatenate([out, lax.reshape(stop, with_axis)], axis)
    elif num == 1:
        delta = asarray(np.nan, dtype=work) if endpoint else ew.subtract(stop, start)
        out = lax.reshape(start, with_axis)
    else:
        delta = asarray(np.nan, dtype=work)
        out = zeros(bounds[:axis] + (0,) + bounds[axis:], work)
    if front_dtypes.issubdtype(dt, np.integer):
        out = ew.floor(out)
    result = lax.convert_element_type(out, dt)
    return (result, delta) if retstep else result


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Any:
    """``base ** linspace(start, stop, num)``."""
    check_arraylike("logspace", start, stop)
    dt = user_dtype("logspace", dtype) or to_inexact_dtype(front_dtypes.result_type(start, stop))
    work = to_inexact_dtype(dt)
    exponents = linspace(astype(start, work), astype(stop, work), num, endpoint=endpoint, axis=axis)
    return lax.convert_element_type(ew.power(base, exponents), dt)


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Any:
    """A geometric progression from ``start`` to ``stop`` (both of one sign, not zero)."""
    check_arraylike("geomspace", start, stop)
    dt = user_dtype("geomspace", dtype) or to_inexact_dtype(front_dtypes.result_type(start, stop))
    work = to_inexact_dtype(dt)
    start, stop = astype(start, work), astype(stop, work)
    sign = ew.sign(start)
    low, high = (ew.log10(ew.true_divide(bound, sign)) for bound in (start, stop))
    out = ew.multiply(sign, logspace(low, high, num, endpoint=endpoint, base=10.0, dtype=work))
    axis = operator.index(axis) % out.ndim
    if axis:
        out = lax.transpose(out, (*range(1, axis + 1), 0, *range(axis + 1, out.ndim)))
    return lax.convert_element_type(out, dt)


def indices(dimensions: Any, dtype: Any = None, sparse: bool = False) -> Any:
    """Index grids: ``out[i]`` counts along axis ``i`` of ``dimensions`` (``sparse``: broadcastable)."""
    dt = user_dtype("indices", dtype) or front_dtypes.default_int()
    dims = _shape("indices", tuple(dimensions))
    grids = []
    for i, d in enumerate(dims):
        shape = tuple(d if k == i else 1 for k in range(len(dims))) if sparse else dims
        grids.append(lax.broadcast_in_dim(lax.iota(dt, d), shape, (i,)))
    if sparse:
        return tuple(grids)
    return stack(grids, 0) if grids else zeros((0,), dt)


def _index_iotas(n: int, m: int, dtype: Any = np.int32) -> tuple[Any, Any]:
    return lax.broadcasted_iota(dtype, (n, m), 0), lax.broadcasted_iota(dtype, (n, m), 1)


def _dims(fname: str, n: Any, m: Any) -> tuple[int, int]:
    (n,) = _shape(fname, n)
    (m,) = (n,) if m is None else _shape(fname, m)
    return n, m


def eye(N: int, M: int | None = None, k: Any = 0, dtype: Any = None, *, device: Any = None) -> Any:
    """Ones on diagonal ``k`` (which may be a traced integer scalar), zeros elsewhere."""
    dt = user_dtype("eye", dtype) or front_dtypes.default_float()
    n, m = _dims("eye", N, M)
    if isinstance(k, int):
        k = min(max(k, np.iinfo(np.int32).min), np.iinfo(np.int32).max)
    offset = asarray(k)
    if offset.shape != () or not front_dtypes.issubdtype(offset.dtype, np.integer):
        raise ValueError(f"mlax.numpy.eye: k must be a scalar integer, got {k!r}{where()}")
    rows, cols = _index_iotas(n, m, offset.dtype)
    return astype(ew.equal(ew.add(rows, offset), cols), dt)


def identity(n: int, dtype: Any = None) -> Any:
    """The ``n`` x ``n`` identity matrix."""
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    """Ones at and below diagonal ``k``; float32 by default (as jnp, even with x64)."""
    dt = user_dtype("tri", dtype) or np.dtype(np.float32)
    n, m = _dims("tri", N, M)
    rows, cols = _index_iotas(n, m)
    below = lax.ge(lax.add(rows, lax.broadcast_in_dim(asarray(np.int32(k)), (n, m), ())), cols)
    return lax.convert_element_type(below, dt)


def _triangle(name: str, lower: bool) -> Any:
    def fn(m: Any, k: int = 0) -> Any:
        check_arraylike(name, m)
        m = asarray(m)
        if m.ndim < 2:
            raise ValueError(f"mlax.numpy.{name}: argument must be at least 2D, got shape {m.shape}{where()}")
        k = operator.index(k)
        mask = tri(*m.shape[-2:], k=k if lower else k - 1, dtype=np.bool_)
        mask = lax.broadcast_in_dim(mask, m.shape, (m.ndim - 2, m.ndim - 1))
        zero = zeros_like(m)
        return lax.select(mask, m, zero) if lower else lax.select(mask, zero, m)

    side = "below" if lower else "above"
    return ew._named(name, f"``m`` with the elements {side} diagonal ``k`` of its last two axes kept, "
                           "the rest zeroed.", fn)


tril = _triangle("tril", lower=True)
triu = _triangle("triu", lower=False)


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> list[Any]:
    """Coordinate grids from 1-D arrays (``indexing='xy'`` swaps the first two axes, as NumPy)."""
    check_arraylike("meshgrid", *xi)
    args = [asarray(x) for x in xi]
    if not copy:
        raise ValueError("mlax.numpy.meshgrid only supports copy=True")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"mlax.numpy.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    if any(a.ndim != 1 for a in args):
        raise ValueError(f"mlax.numpy.meshgrid: arguments must be 1D, got shapes {[a.shape for a in args]}")
    swap = indexing == "xy" and len(args) >= 2
    if swap:
        args[0], args[1] = args[1], args[0]
    full_shape = [a.shape[0] for a in args]
    out = []
    for i, a in enumerate(args):
        shape = [1] * len(args) if sparse else list(full_shape)
        shape[i] = a.shape[0]
        out.append(lax.broadcast_in_dim(a, shape, (i,)))
    if swap:
        out[0], out[1] = out[1], out[0]
    return out


def diag(v: Any, k: int = 0) -> Any:
    """A 1-D ``v`` placed on diagonal ``k`` of a square matrix; of a 2-D ``v``, its diagonal ``k``."""
    check_arraylike("diag", v)
    v = asarray(v)
    k = operator.index(k)
    if v.ndim == 2:
        return diagonal(v, offset=k)
    if v.ndim != 1:
        raise ValueError(f"mlax.numpy.diag: input must be 1d or 2d, got shape {v.shape}{where()}")
    n = v.shape[0] + abs(k)
    padded = lax.pad(v, asarray(np.zeros((), v.dtype)), [(0, abs(k), 0)])
    # Row i holds v[i] when k >= 0; column j holds v[j] when k < 0.
    spread = lax.broadcast_in_dim(padded, (n, n), (0,) if k >= 0 else (1,))
    mask = eye(n, k=k, dtype=np.bool_)
    return lax.select(mask, spread, zeros_like(spread))


def diagflat(v: Any, k: int = 0) -> Any:
    """The flattened ``v`` on diagonal ``k`` of a square matrix."""
    check_arraylike("diagflat", v)
    v = asarray(v)
    return diag(lax.reshape(v, (v.size,)), k)


def copy(a: Any, order: str | None = None) -> Any:
    """A copy of ``a``: a new Array, as jax's (deleting or donating one leaves the other)."""
    check_arraylike("copy", a)
    out = asarray(a)
    return out.copy() if out is a and type(out) is Array else out
