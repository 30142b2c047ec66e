"""mlax.numpy.pad: constant, edge, wrap, reflect and symmetric padding from lax.pad and slices."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax.core import Tracer
from mlax.numpy.util import asarray, slice_axis, static_int_array
from mlax.source_info import where

__all__ = ["pad"]

_UNSUPPORTED_PAD_MODES = ("linear_ramp", "maximum", "mean", "median", "minimum", "empty")


def _pad_pairs(fname: str, what: str, value: Any, ndim: int) -> list[tuple[Any, Any]]:
    """NumPy's broadcasting of a pad argument to one (before, after) pair per axis."""
    array = np.asarray(value)
    try:
        pairs = np.broadcast_to(array, (ndim, 2)) if array.ndim <= 2 else None
    except ValueError:
        pairs = None
    if pairs is None:
        raise ValueError(f"{fname}: {what} {value!r} cannot be broadcast to ({ndim}, 2){where()}")
    return [(pairs[i, 0], pairs[i, 1]) for i in range(ndim)]


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """``jnp.pad`` for modes constant, edge, wrap, reflect and symmetric (even reflection)."""
    array = asarray(array)
    widths = _pad_pairs("pad", "pad_width", static_int_array("pad", "pad_width", pad_width), array.ndim)
    widths = [(int(b), int(a)) for b, a in widths]
    if any(b < 0 or a < 0 for b, a in widths):
        raise ValueError(f"pad: pad_width must be non-negative, got {widths}{where()}")
    if mode == "constant":
        return _pad_constant(array, widths, kwargs.pop("constant_values", 0), kwargs)
    if mode in _UNSUPPORTED_PAD_MODES:
        raise NotImplementedError(f"pad: mode={mode!r} is not supported yet (supported: constant, edge, "
                                  f"wrap, reflect, symmetric){where()}")
    if mode not in ("edge", "wrap", "reflect", "symmetric"):
        raise ValueError(f"pad: unknown mode {mode!r}{where()}")
    if kwargs.pop("reflect_type", "even") != "even":
        raise NotImplementedError(f"pad: reflect_type='odd' is not supported yet{where()}")
    _no_extra_kwargs(mode, kwargs)
    for axis, (before, after) in enumerate(widths):
        if before or after:
            if array.shape[axis] == 0:
                raise ValueError(f"pad: can't extend empty axis {axis} using mode {mode!r}{where()}")
            array = (_pad_edge(array, axis, before, after) if mode == "edge"
                     else _pad_periodic(array, axis, before, after, mode))
    return array


def _no_extra_kwargs(mode: str, kwargs: dict[str, Any]) -> None:
    if kwargs:
        raise ValueError(f"pad: unsupported keyword arguments {sorted(kwargs)} for mode {mode!r}{where()}")


def _pad_constant(array: Any, widths: list[tuple[int, int]], values: Any, kwargs: dict[str, Any]) -> Any:
    _no_extra_kwargs("constant", kwargs)
    if isinstance(values, Tracer) or np.size(values) == 1:
        fill = lax.convert_element_type(lax.reshape(asarray(values), ()), array.dtype)
        return lax.pad(array, fill, [(b, a, 0) for b, a in widths])
    pairs = _pad_pairs("pad", "constant_values", np.asarray(values), array.ndim)
    for axis, (before, after) in enumerate(widths):
        for width, value, at_end in ((before, pairs[axis][0], False), (after, pairs[axis][1], True)):
            config = [(0, 0, 0)] * array.ndim
            config[axis] = (0, width, 0) if at_end else (width, 0, 0)
            array = lax.pad(array, lax.convert_element_type(asarray(value), array.dtype), config)
    return array


def _concatenate(pieces: list[Any], axis: int) -> Any:
    pieces = [p for p in pieces if p.shape[axis]]
    return pieces[0] if len(pieces) == 1 else lax.concatenate(pieces, axis)


def _widen(edge: Any, axis: int, width: int) -> Any:
    """A size-1 slice repeated ``width`` times along ``axis``."""
    shape = edge.shape[:axis] + (width,) + edge.shape[axis + 1:]
    return lax.broadcast_in_dim(edge, shape, tuple(range(edge.ndim)))


def _pad_edge(x: Any, axis: int, before: int, after: int) -> Any:
    n = x.shape[axis]
    first, last = slice_axis(x, axis, 0, 1), slice_axis(x, axis, n - 1, n)
    return _concatenate([_widen(first, axis, before), x, _widen(last, axis, after)], axis)


def _pad_periodic(x: Any, axis: int, before: int, after: int, mode: str) -> Any:
    """Wrap, reflect and symmetric padding all repeat one period that starts at x[0]."""
    n = x.shape[axis]
    if mode == "wrap" or n == 1:
        period = x
    else:
        mirrored = lax.rev(x, (axis,))
        period = _concatenate([x, mirrored if mode == "symmetric" else slice_axis(mirrored, axis, 1, n - 1)],
                             axis)
    p = period.shape[axis]
    copies_before, copies_after = -(-before // p), -(-(n + after) // p)
    tiled = _concatenate([period] * (copies_before + copies_after), axis)
    start = copies_before * p - before
    return slice_axis(tiled, axis, start, start + before + n + after)
