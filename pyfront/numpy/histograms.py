"""mlax.numpy binning: bincount, digitize, histogram (1-d, 2-d, n-d, and the bin edges alone) and
interp, as jax.numpy.

Each finds bins with ``searchsorted`` on the edges and counts with a scatter-add (``.at[].add``)
that drops out-of-range bins, as jnp does, so NaN samples fall out of every histogram. Counts
without a static ``length`` (bincount) or bin count (histogram) need concrete inputs.
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax
from mlax.numpy import elementwise as ew
from mlax.numpy import math_extra as mx
from mlax.numpy.creation import linspace, zeros
from mlax.numpy.manipulation import concatenate, reshape, stack, transpose
from mlax.numpy.reductions import max as max_
from mlax.numpy.reductions import min as min_
from mlax.numpy.reductions import ptp
from mlax.numpy.sorting import searchsorted
from mlax.numpy.util import asarray, check_arraylike, concrete, to_inexact_dtype
from mlax.source_info import where

__all__ = ["bincount", "digitize", "histogram", "histogram2d", "histogram_bin_edges", "histogramdd", "interp"]


def _promote_inexact(*args: Any) -> list[Any]:
    """jnp's ``promote_dtypes_inexact``: one inexact dtype for all, no broadcasting."""
    dtype, weak = front_dtypes.result_type(*args, return_weak_type_flag=True)
    return [lax.convert_element_type(asarray(a), to_inexact_dtype(dtype), weak_type=weak) for a in args]


def bincount(x: Any, weights: Any = None, minlength: int = 0, *, length: int | None = None) -> Any:
    """How often each nonnegative integer occurs in the 1-d ``x`` (negative values count as 0),
    or the sum of their ``weights``; ``length`` bins (static), by default ``max(x) + 1``."""
    check_arraylike("bincount", x)
    x = asarray(x)
    if x.dtype == np.bool_:
        x = lax.convert_element_type(x, np.int32)
    if not front_dtypes.issubdtype(x.dtype, np.integer):
        raise TypeError(f"mlax.numpy.bincount: x argument to bincount must have an integer type; got "
                        f"{x.dtype}{where()}")
    if x.ndim != 1:
        raise ValueError(f"mlax.numpy.bincount: only 1-dimensional input supported{where()}")
    minlength = operator.index(minlength)
    if length is None:
        values = concrete(x)
        length = builtins.max(minlength, values.size and int(builtins.max(0, values.max())) + 1)
    else:
        length = operator.index(length)
    if weights is None:
        weights = asarray(np.array(1, front_dtypes.default_int()))
    else:
        check_arraylike("bincount", weights)
        weights = asarray(weights)
        if weights.shape != x.shape:
            raise ValueError(f"mlax.numpy.bincount: type of weights must match type of x, got shapes "
                             f"{x.shape} and {weights.shape}{where()}")
    return zeros(length, weights.dtype).at[mx.clip(x, 0)].add(weights, mode="drop")


def digitize(x: Any, bins: Any, right: bool = False, *, method: str | None = None) -> Any:
    """The index of the bin of each ``x`` in the monotonic 1-d ``bins`` (increasing or not)."""
    check_arraylike("digitize", x, bins)
    x, bins = asarray(x), asarray(bins)
    right = bool(right)
    if bins.ndim != 1:
        raise ValueError(f"mlax.numpy.digitize: bins must be a 1-dimensional array; got shape "
                         f"{bins.shape}{where()}")
    if bins.shape[0] == 0:
        return lax.broadcast_in_dim(asarray(np.int32(0)), x.shape, ())
    side = "left" if right else "right"
    kwargs = {} if method is None else {"method": method}
    increasing = searchsorted(bins, x, side=side, **kwargs)
    decreasing = bins.shape[0] - searchsorted(bins[::-1], x, side=side, **kwargs)
    return mx.where(bins[-1] >= bins[0], increasing, decreasing)


def histogram_bin_edges(a: Any, bins: Any = 10, range: Sequence[Any] | None = None,  # noqa: A002 (jnp)
                        weights: Any = None) -> Any:
    """The edges of ``bins`` equal bins over ``range`` (default: the data's min and max, widened
    by 0.5 each way when they coincide), or ``bins`` itself when it is a 1-d array."""
    if isinstance(bins, str):
        raise NotImplementedError("mlax.numpy.histogram_bin_edges: string values for `bins` not implemented")
    check_arraylike("histogram_bin_edges", a, bins)
    arr = asarray(a)
    dtype = to_inexact_dtype(arr.dtype)
    if np.ndim(bins) == 1:
        return asarray(bins, dtype=dtype)
    count = operator.index(bins)
    bounds = asarray([min_(arr), max_(arr)] if range is None else range, dtype=dtype)
    if bounds.shape != (2,):
        raise ValueError(f"mlax.numpy.histogram_bin_edges: `range` must be either None or a sequence of "
                         f"scalars, got {range}{where()}")
    flat = ptp(bounds) == 0
    low = mx.where(flat, bounds[0] - 0.5, bounds[0])
    high = mx.where(flat, bounds[1] + 0.5, bounds[1])
    return linspace(low, high, count + 1, dtype=dtype)


def histogram(a: Any, bins: Any = 10, range: Sequence[Any] | None = None,  # noqa: A002 (jnp)
              weights: Any = None, density: bool | None = None) -> tuple[Any, Any]:
    """Counts (or summed ``weights``) of ``a`` in each bin, and the bin edges; the last bin
    includes its right edge; ``density`` normalises to unit area."""
    if weights is None:
        check_arraylike("histogram", a, bins)
        (a,) = _promote_inexact(a)
        weights = mx._full(a, 1, a.dtype)
    else:
        check_arraylike("histogram", a, bins, weights)
        if np.shape(a) != np.shape(weights):
            raise ValueError(f"mlax.numpy.histogram: weights should have the same shape as a{where()}")
        a, weights = _promote_inexact(a, weights)
    edges = histogram_bin_edges(a, bins, range, weights)
    n_edges = edges.shape[0]
    index = mx.where(a == edges[-1], n_edges - 1, searchsorted(edges, a, side="right"))
    counts = zeros(n_edges, weights.dtype).at[index].add(weights)[1:]
    if density:
        counts = counts / (edges[1:] - edges[:-1]) / counts.sum()
    return counts, edges


def histogramdd(sample: Any, bins: Any = 10, range: Sequence[Any] | None = None,  # noqa: A002 (jnp)
                weights: Any = None, density: bool | None = None) -> tuple[Any, list[Any]]:
    """The histogram of ``N`` points in ``D`` dimensions (``sample`` is (N, D)): counts in a
    grid of bins, and the edges per dimension."""
    if weights is None:
        check_arraylike("histogramdd", sample)
        (sample,) = _promote_inexact(sample)
    else:
        check_arraylike("histogramdd", sample, weights)
        if np.shape(weights) != np.shape(sample)[:1]:
            raise ValueError(f"mlax.numpy.histogramdd: should have one weight for each sample{where()}")
        sample, weights = _promote_inexact(sample, weights)
    if sample.ndim != 2:
        raise ValueError(f"mlax.numpy.histogramdd: sample must be 2-dimensional (N, D), got shape "
                         f"{sample.shape}{where()}")
    n, dims = sample.shape
    if range is not None and (len(range) != dims or builtins.any(r is not None and np.shape(r)[0] != 2
                                                                 for r in range)):
        raise ValueError(f"mlax.numpy.histogramdd: for sample.shape={(n, dims)}, range must be a sequence "
                         f"of {dims} pairs or Nones; got range={range}{where()}")
    try:
        per_dim = list(bins)
    except TypeError:
        per_dim = [bins] * dims
    else:
        if len(per_dim) != dims:
            raise ValueError(f"mlax.numpy.histogramdd: should be a bin for each dimension{where()}")
    flat_index, all_edges, sizes = None, [], []
    for i in builtins.range(dims):
        column = sample[:, i]
        edges = histogram_bin_edges(column, per_dim[i], None if range is None else range[i], weights)
        index = searchsorted(edges, column, side="right")
        index = mx.where(column == edges[-1], index - 1, index)
        size = edges.shape[0] + 1
        index = mx.clip(index, 0, size - 1)  # jnp's ravel_multi_index(mode="clip")
        flat_index = index if flat_index is None else flat_index * size + index
        all_edges.append(edges)
        sizes.append(size)
    hist = reshape(bincount(flat_index, weights, length=math.prod(sizes)), tuple(sizes))
    hist = hist[(slice(1, -1),) * dims]
    if density:
        hist = mx.astype(hist, sample.dtype)
        hist = hist / hist.sum()
        for d, edges in enumerate(all_edges):
            widths = edges[1:] - edges[:-1]
            hist = hist / reshape(widths, tuple(-1 if k == d else 1 for k in builtins.range(dims)))
    return hist, all_edges


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Sequence[Any] | None = None,  # noqa: A002 (jnp)
                weights: Any = None, density: bool | None = None) -> tuple[Any, Any, Any]:
    """``histogramdd`` of the points ``(x[i], y[i])``: the counts and the x and y edges."""
    check_arraylike("histogram2d", x, y)
    try:
        n_bins = len(bins)
    except TypeError:
        n_bins = 1
    if n_bins not in (1, 2):
        edges = asarray(bins)
        bins = [edges, edges]
    hist, edges = histogramdd(transpose(stack([x, y])), bins, range, weights, density)
    return hist, edges[0], edges[1]


def _extrapolate(name: str, value: Any) -> bool:
    if not isinstance(value, str):
        return False
    if value != "extrapolate":
        raise ValueError(f"mlax.numpy.interp: the only valid string value of `{name}` is 'extrapolate', "
                         f"but got: {value!r}{where()}")
    return True


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None) -> Any:
    """Piecewise-linear interpolation of the points ``(xp, fp)`` (``xp`` increasing) at ``x``;
    ``left``/``right`` outside (``"extrapolate"`` continues the end segments), or periodic."""
    check_arraylike("interp", x, xp, fp)
    if np.shape(xp) != np.shape(fp) or np.ndim(xp) != 1:
        raise ValueError(f"mlax.numpy.interp: xp and fp must be one-dimensional arrays of equal "
                         f"size{where()}")
    x, xp = _promote_inexact(x, xp)
    (fp,) = _promote_inexact(fp)
    extrapolate_left, extrapolate_right = _extrapolate("left", left), _extrapolate("right", right)
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"mlax.numpy.interp: period must be a scalar; got {period}{where()}")
        period = ew.absolute(period)
        x, xp = x % period, xp % period
        xp, fp = lax.sort_key_val(xp, fp)
        xp = concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = concatenate([fp[-1:], fp, fp[:1]])
    i = mx.clip(searchsorted(xp, x, side="right"), 1, xp.shape[0] - 1)
    df = fp[i] - fp[i - 1]
    dx = xp[i] - xp[i - 1]
    delta = x - xp[i - 1]
    epsilon = np.spacing(np.finfo(xp.dtype).eps)  # NumPy's finfo: bfloat16 is a ValueError, as in jnp
    tiny = lax.le(lax.abs(dx), mx._full(dx, epsilon, dx.dtype))  # no NaN gradients for tiny steps
    f = mx.where(tiny, fp[i - 1], fp[i - 1] + (delta / mx.where(tiny, 1, dx)) * df)
    if period is None and not extrapolate_left:
        f = mx.where(x < xp[0], fp[0] if left is None else left, f)
    if period is None and not extrapolate_right:
        f = mx.where(x > xp[-1], fp[-1] if right is None else right, f)
    return f


