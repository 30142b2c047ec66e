"""mlax.numpy array assembly and axis helpers: block, resize, rollaxis, apply_along_axis,
apply_over_axes and fromfunction, as jax.numpy (the last three through mlax.vmap, so the user's
function sees one slice, or one element, at a time as in jax)."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

from mlax.batching import vmap
from mlax.numpy.creation import arange, zeros_like
from mlax.numpy.manipulation import concatenate, expand_dims, moveaxis, ravel, reshape, tile
from mlax.numpy.util import asarray, check_arraylike, normalize_axis
from mlax.source_info import where

__all__ = ["apply_along_axis", "apply_over_axes", "block", "fromfunction", "resize", "rollaxis"]


def _index_tuple(shape: Any) -> tuple[int, ...]:
    """A static shape: one int or a sequence of them."""
    try:
        return (operator.index(shape),)
    except TypeError:
        return tuple(operator.index(d) for d in shape)


def _block(xs: Any) -> tuple[Any, int]:
    """The assembled array and the nesting depth of ``xs`` (1 for an array)."""
    if isinstance(xs, tuple):
        raise ValueError(f"mlax.numpy.block does not allow tuples, got {xs}")
    if not isinstance(xs, list):
        return asarray(xs), 1
    if not xs:
        raise ValueError("mlax.numpy.block does not allow empty list arguments")
    parts, depths = zip(*(_block(x) for x in xs), strict=True)
    if len(set(depths)) != 1:
        raise ValueError("Mismatched list depths in mlax.numpy.block")
    rank = max(depths[0], *(p.ndim for p in parts))
    parts = [reshape(p, (1,) * (rank - p.ndim) + p.shape) for p in parts]
    return concatenate(parts, axis=-depths[0]), depths[0] + 1


def block(arrays: Any) -> Any:
    """``jnp.block``: an array from nested lists of blocks; the innermost lists join along the
    last axis, the next along the second-to-last, and so on."""
    return _block(arrays)[0]


def resize(a: Any, new_shape: Any) -> Any:
    """``jnp.resize``: ``a``'s elements, repeated in order, filling ``new_shape`` (zeros when
    either is empty)."""
    check_arraylike("resize", a)
    new_shape = _index_tuple(new_shape)
    if any(d < 0 for d in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    flat = ravel(a)
    size = math.prod(new_shape)
    if flat.size == 0 or size == 0:
        return zeros_like(flat, shape=new_shape)
    return reshape(tile(flat, -(-size // flat.size))[:size], new_shape)


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """``jnp.rollaxis``: ``axis`` moved to just before position ``start`` (NumPy's older form of
    moveaxis)."""
    check_arraylike("rollaxis", a)
    a = asarray(a)
    start = operator.index(start)
    axis = normalize_axis("rollaxis", axis, a.ndim)
    if not -a.ndim <= start <= a.ndim:
        raise ValueError(f"start={start} must satisfy {-a.ndim}<=start<={a.ndim}{where()}")
    start = start + a.ndim if start < 0 else start
    return moveaxis(a, axis, start - 1 if start > axis else start)


def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: Any, *args: Any, **kwargs: Any) -> Any:
    """``jnp.apply_along_axis``: ``func1d`` of every 1-D slice along ``axis``, through nested vmaps;
    the result's axes from ``func1d`` take the place of ``axis``."""
    check_arraylike("apply_along_axis", arr)
    arr = asarray(arr)
    axis = normalize_axis("apply_along_axis", axis, arr.ndim)

    def func(x: Any) -> Any:
        return func1d(x, *args, **kwargs)

    for i in range(1, arr.ndim - axis):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(arr)


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Sequence[int]) -> Any:
    """``jnp.apply_over_axes``: ``func(a, axis)`` for each axis in turn, a dropped axis put back
    as size 1."""
    check_arraylike("apply_over_axes", a)
    a = asarray(a)
    for axis in axes:
        b = asarray(func(a, axis))
        if b.ndim == a.ndim - 1:
            b = expand_dims(b, axis)
        elif b.ndim != a.ndim:
            raise ValueError("function is not returning an array of the correct shape")
        a = b
    return a


def fromfunction(function: Callable[..., Any], shape: Any, *, dtype: Any = float, **kwargs: Any) -> Any:
    """``jnp.fromfunction``: ``function(i, j, ...)`` at every index of ``shape``, evaluated through
    nested vmaps over ``arange`` of each dimension (so ``function`` sees scalars)."""
    shape = _index_tuple(shape)
    for i in range(len(shape)):
        function = vmap(function, in_axes=tuple(0 if j == i else None for j in range(len(shape)))[::-1])
    return function(*(arange(n, dtype=dtype) for n in shape), **kwargs)
