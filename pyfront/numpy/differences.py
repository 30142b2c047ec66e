"""mlax.numpy finite differences: diff, ediff1d, gradient, trapezoid and unwrap, as jax.numpy.

All are slices along one axis combined by jnp's promoting arithmetic, in the order jnp uses,
so results and their dtypes agree with JAX (booleans difference by ``!=``).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax
from mlax.numpy import elementwise as ew
from mlax.numpy import math_extra as mx
from mlax.numpy.manipulation import broadcast_to, concatenate, moveaxis, ravel
from mlax.numpy.reductions import cumsum
from mlax.numpy.reductions import sum as sum_
from mlax.numpy.util import (
    asarray,
    check_arraylike,
    normalize_axis,
    promote_dtypes,
    slice_axis,
    to_inexact_dtype,
)
from mlax.source_info import where

__all__ = ["diff", "ediff1d", "gradient", "trapezoid", "unwrap"]


def _promote_inexact(*args: Any) -> list[Any]:
    """jnp's ``promote_dtypes_inexact``: one inexact dtype for all, no broadcasting."""
    dtype, weak = front_dtypes.result_type(*args, return_weak_type_flag=True)
    return [lax.convert_element_type(asarray(a), to_inexact_dtype(dtype), weak_type=weak) for a in args]


def _cut(x: Any, axis: int, start: int, stop: int | None = None) -> Any:
    """``x[..., start:stop, ...]`` on ``axis`` with Python's negative bounds."""
    n = x.shape[axis]
    begin, end, _ = slice(start, stop).indices(n)
    return slice_axis(x, axis, begin, max(begin, end))


def _edge(name: str, a: Any, value: Any, axis: int) -> Any:
    """A prepend/append value: scalars become one slice along ``axis``."""
    check_arraylike(name, value)
    value = asarray(value)
    if value.ndim:
        return value
    return broadcast_to(value, tuple(1 if d == axis else s for d, s in enumerate(a.shape)))


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """The ``n``-th discrete difference along ``axis`` (after joining ``prepend``/``append``)."""
    check_arraylike("diff", a)
    arr = asarray(a)
    n, axis = operator.index(n), operator.index(axis)
    if n == 0:
        return arr
    if n < 0:
        raise ValueError(f"mlax.numpy.diff: order must be non-negative but got {n}{where()}")
    if arr.ndim == 0:
        raise ValueError(f"mlax.numpy.diff: diff requires input that is at least one dimensional{where()}")
    axis = normalize_axis("mlax.numpy.diff", axis, arr.ndim)
    parts = [_edge("diff", arr, prepend, axis)] if prepend is not None else []
    parts.append(arr)
    if append is not None:
        parts.append(_edge("diff", arr, append, axis))
    if len(parts) > 1:
        arr = concatenate(parts, axis)
    op = ew.not_equal if arr.dtype == np.bool_ else ew.subtract
    for _ in range(n):
        arr = op(_cut(arr, axis, 1), _cut(arr, axis, 0, -1))
    return arr


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """Differences of consecutive elements of the flattened ``ary``, with ``to_begin`` and
    ``to_end`` (in its dtype) around them."""
    check_arraylike("ediff1d", ary)
    arr = ravel(asarray(ary))
    result = lax.sub(_cut(arr, 0, 1), _cut(arr, 0, 0, -1))
    if to_begin is not None:
        check_arraylike("ediff1d", to_begin)
        result = concatenate((ravel(mx.astype(to_begin, arr.dtype)), result))
    if to_end is not None:
        check_arraylike("ediff1d", to_end)
        result = concatenate((result, ravel(mx.astype(to_end, arr.dtype))))
    return result


def _gradient_along(a: Any, h: Any, axis: int) -> Any:
    """Second-order central differences inside, first-order at the edges; ``h`` is a scalar
    step or the coordinates along ``axis``."""
    def cut(x: Any, start: int, stop: int | None = None) -> Any:
        return _cut(x, axis, start, stop)

    upper = cut(a, 1, 2) - cut(a, 0, 1)
    lower = cut(a, -1) - cut(a, -2, -1)
    if np.ndim(h) == 0:
        inner = (cut(a, 2) - cut(a, 0, -2)) * 0.5 / h
        return concatenate((upper / h, inner, lower / h), axis=axis)
    if np.ndim(h) != 1:
        raise ValueError(f"mlax.numpy.gradient: spacing arrays must be 1D arrays or scalars{where()}")
    if h.shape[0] != a.shape[axis]:
        raise ValueError("mlax.numpy.gradient: spacing arrays must have the same length as the dimension "
                         f"along which the gradient is calculated{where()}")
    h = lax.reshape(h, tuple(h.shape[0] if d == axis else 1 for d in range(a.ndim)))
    upper = upper / (cut(h, 1, 2) - cut(h, 0, 1))
    lower = lower / (cut(h, -1) - cut(h, -2, -1))
    dx1 = cut(h, 1, -1) - cut(h, 0, -2)
    dx2 = cut(h, 2) - cut(h, 1, -1)
    inner = (-dx2 / (dx1 * (dx1 + dx2)) * cut(a, 0, -2) + (dx2 - dx1) / (dx1 * dx2) * cut(a, 1, -1)
             + dx1 / (dx2 * (dx1 + dx2)) * cut(a, 2))
    return concatenate((upper, inner, lower), axis=axis)


def gradient(f: Any, *varargs: Any, axis: int | Sequence[int] | None = None,
             edge_order: int | None = None) -> Any:
    """The gradient of sampled ``f`` along each of ``axis`` (one array, or a list for several),
    with unit spacing, one spacing for all axes, or one per axis (scalars or coordinates)."""
    if edge_order is not None:
        raise NotImplementedError("mlax.numpy.gradient: the 'edge_order' argument is not supported")
    check_arraylike("gradient", f, *varargs)
    a, *spacing = _promote_inexact(f, *varargs)
    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        axes = tuple(normalize_axis("mlax.numpy.gradient", d, a.ndim)
                     for d in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if not axes:
        return []
    if min(a.shape[d] for d in axes) < 2:
        raise ValueError("mlax.numpy.gradient: shape of array too small to calculate a numerical gradient, "
                         f"at least 2 elements are required{where()}")
    if not spacing:
        steps: list[Any] = [1.0] * len(axes)
    elif len(spacing) == 1:
        steps = spacing * len(axes)
    elif len(spacing) == len(axes):
        steps = spacing
    else:
        raise TypeError(f"mlax.numpy.gradient: invalid number of spacing arguments {len(spacing)} for "
                        f"axis={axis}{where()}")
    grads = [_gradient_along(a, h, d) for d, h in zip(axes, steps, strict=True)]
    return grads[0] if len(axes) == 1 else grads


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, at the sample points ``x``
    or with step ``dx``."""
    if x is None:
        check_arraylike("trapezoid", y)
        (y,) = _promote_inexact(y)
        step = asarray(dx)
        if step.ndim > 0:
            step = lax.expand_dims(step, tuple(range(y.ndim - step.ndim)))
            step = moveaxis(step, axis, -1)
    else:
        check_arraylike("trapezoid", y, x)
        y, x = _promote_inexact(y, x)
        step = diff(x) if x.ndim == 1 else moveaxis(diff(x, axis=axis), axis, -1)
    y = moveaxis(y, axis, -1)
    if step.ndim == 0 or step.shape[-1] == 1:  # a constant step: one sum
        step = step if step.ndim == 0 else step[..., 0]
        return step * (sum_(y, -1) - 0.5 * (y[..., 0] + y[..., -1]))
    return 0.5 * sum_(step * (y[..., 1:] + y[..., :-1]), -1)


def unwrap(p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * np.pi) -> Any:
    """``p`` with jumps larger than ``discont`` (default ``period / 2``) along ``axis`` replaced
    by their complement modulo ``period``."""
    check_arraylike("unwrap", p)
    p, period = promote_dtypes(p, period)
    if p.shape[axis] == 0:
        return p
    if discont is None:
        discont = period / 2
    interval = period // 2 if front_dtypes.issubdtype(p.dtype, np.integer) else period / 2
    dd = diff(p, axis=axis)
    ddmod = ew.remainder(dd + interval, period) - interval
    ddmod = mx.where((ddmod == -interval) & (dd > 0), interval, ddmod)
    correction = mx.where(ew.absolute(dd) < discont, 0, ddmod - dd)
    axis = normalize_axis("mlax.numpy.unwrap", axis, p.ndim)
    return concatenate((_cut(p, axis, 0, 1), _cut(p, axis, 1) + cumsum(correction, axis=axis)), axis=axis)


