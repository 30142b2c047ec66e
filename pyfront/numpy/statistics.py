"""mlax.numpy order statistics and covariances: quantile, percentile, median (and their NaN-skipping
forms), cov and corrcoef, as jax.numpy.

Quantiles sort along the reduced axes (moved last and flattened into one) and read the two
neighbouring order statistics of each requested position ``q * (n - 1)``, as jnp does: the
position and the linear weights are computed in the dtype of ``q`` (so a float16 ``q`` rounds
them), the result is converted back to the inexact dtype of ``a``. Without ``nan`` in the name
a NaN anywhere in a slice makes its result NaN; the ``nan`` forms count only the non-NaN
elements (sorted last). ``method="inverted_cdf"`` takes the first element whose cumulative
weight reaches ``q`` times the total, and is the one method that accepts ``weights``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax
from mlax.numpy import elementwise as ew
from mlax.numpy import math_extra as mx
from mlax.numpy.creation import diag, full
from mlax.numpy.indexing import take_along_axis
from mlax.numpy.manipulation import atleast_2d, concatenate, moveaxis, squeeze, transpose
from mlax.numpy.products import dot
from mlax.numpy.reductions import any as any_
from mlax.numpy.reductions import average, cumsum
from mlax.numpy.reductions import sum as sum_
from mlax.numpy.util import (
    asarray,
    broadcast_shapes_or_raise,
    check_arraylike,
    const_like,
    normalize_axes,
    normalize_axis,
    to_inexact_dtype,
    user_dtype,
)
from mlax.source_info import where

__all__ = ["corrcoef", "cov", "median", "nanmedian", "nanpercentile", "nanquantile", "percentile", "quantile"]

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _is_inexact(dtype: Any) -> bool:
    return front_dtypes.issubdtype(dtype, np.inexact)


def _promote_inexact(*args: Any) -> list[Any]:
    """jnp's ``promote_dtypes_inexact``: one inexact dtype for all, no broadcasting."""
    dtype, weak = front_dtypes.result_type(*args, return_weak_type_flag=True)
    return [lax.convert_element_type(asarray(a), to_inexact_dtype(dtype), weak_type=weak) for a in args]


def _axes_last(name: str, x: Any, axis: Any) -> tuple[Any, tuple[int, ...]]:
    """``x`` with the reduced axes moved last and flattened into one, and the shape that
    ``keepdims`` gives the result."""
    if axis is None:
        return lax.reshape(x, (x.size,)), (1,) * x.ndim
    dims = (normalize_axis(name, axis, x.ndim),) if not isinstance(axis, (tuple, list)) \
        else tuple(sorted(normalize_axes(name, axis, x.ndim)))
    kept = tuple(d for d in range(x.ndim) if d not in dims)
    moved = lax.transpose(x, kept + dims)
    flat = lax.reshape(moved, tuple(x.shape[d] for d in kept) + (math.prod(x.shape[d] for d in dims),))
    return flat, tuple(1 if d in dims else s for d, s in enumerate(x.shape))


def _read(x: Any, index: Any) -> Any:
    """``x[..., index]`` per slice: ``x`` is (*kept, n), ``index`` is (*q_shape, *kept) with
    q_shape of rank 0 or 1; the result has ``index``'s shape."""
    if index.ndim == x.ndim - 1:
        return squeeze(take_along_axis(x, lax.expand_dims(index, (index.ndim,)), axis=-1), -1)
    return moveaxis(take_along_axis(x, moveaxis(index, 0, -1), axis=-1), -1, 0)


def _order_statistics(x: Any, q: Any, squash_nans: bool, method: str) -> Any:
    """The quantiles of the sorted slices of ``x`` (*kept, n) at ``q`` (rank 0 or 1), for
    every method but inverted_cdf; shape (*q_shape, *kept)."""
    out_shape = q.shape + x.shape[:-1]
    qb = lax.broadcast_in_dim(q, out_shape, tuple(range(q.ndim)))
    if squash_nans:
        count = sum_(ew.logical_not(mx.isnan(x)), axis=-1, dtype=q.dtype)
        count = lax.broadcast_in_dim(count, out_shape, tuple(range(q.ndim, len(out_shape))))
    else:
        count = const_like(qb, x.shape[-1], False)
    last = lax.sub(count, const_like(count, 1))
    position = lax.mul(qb, last)
    low, high = lax.floor(position), lax.ceil(position)
    high_weight = lax.sub(position, low)
    low_weight = lax.sub(const_like(high_weight, 1), high_weight)
    zero = const_like(low, 0)
    index_dtype = front_dtypes.default_int()
    low_index = lax.convert_element_type(lax.max(zero, lax.min(low, last)), index_dtype)
    high_index = lax.convert_element_type(lax.max(zero, lax.min(high, last)), index_dtype)
    low_value, high_value = _read(x, low_index), _read(x, high_index)
    if method == "linear":
        return lax.add(lax.mul(lax.convert_element_type(low_value, q.dtype), low_weight),
                       lax.mul(lax.convert_element_type(high_value, q.dtype), high_weight))
    if method == "lower":
        return low_value
    if method == "higher":
        return high_value
    if method == "nearest":
        return lax.select(lax.le(high_weight, const_like(high_weight, 0.5)), low_value, high_value)
    return lax.mul(lax.add(low_value, high_value), const_like(low_value, 0.5))  # midpoint


def _inverted_cdf(x: Any, weights: Any, q: Any, squash_nans: bool) -> Any:
    """The first sorted element whose cumulative (clean) weight reaches ``q`` times the total;
    NaN where a weight is negative or NaN, or where the data is (all) NaN."""
    if weights is None:
        weights = const_like(x, 1, False)
    bad_weight = ew.logical_or(lax.lt(weights, const_like(weights, 0)), mx.isnan(weights))
    nan_data = mx.isnan(x)
    clean = lax.select(ew.logical_or(bad_weight, nan_data), const_like(weights, 0), weights)
    cumulative = cumsum(clean, axis=-1)
    n = x.shape[-1]
    total = lax.squeeze(lax.slice_in_dim(cumulative, n - 1, n, axis=-1), (x.ndim - 1,))
    out_shape = q.shape + total.shape
    kept_dims = tuple(range(q.ndim, len(out_shape)))
    target = lax.mul(lax.broadcast_in_dim(q, out_shape, tuple(range(q.ndim))),
                     lax.broadcast_in_dim(total, out_shape, kept_dims))
    cumulative = lax.broadcast_in_dim(cumulative, out_shape + (n,), kept_dims + (len(out_shape),))
    is_less = lax.lt(cumulative, lax.broadcast_in_dim(target, out_shape + (n,), tuple(range(len(out_shape)))))
    index_dtype = front_dtypes.default_int()
    index = sum_(is_less, axis=-1, dtype=index_dtype)
    if squash_nans:
        valid = sum_(ew.logical_not(nan_data), axis=-1, dtype=q.dtype)
        force_nan = ew.logical_or(any_(bad_weight, axis=-1), lax.eq(valid, const_like(valid, 0)))
    else:
        valid = lax.broadcast_in_dim(asarray(np.array(n, q.dtype)), total.shape, ())
        force_nan = ew.logical_or(any_(bad_weight, axis=-1), any_(nan_data, axis=-1))
    largest = lax.convert_element_type(lax.sub(valid, const_like(valid, 1)), index_dtype)
    largest = lax.broadcast_in_dim(largest, out_shape, kept_dims)
    index = lax.max(const_like(index, 0), lax.min(index, largest))
    result = _read(x, index)
    force_nan = lax.broadcast_in_dim(force_nan, out_shape, kept_dims)
    return lax.select(force_nan, const_like(result, np.nan), result)


def _quantile(name: str, a: Any, q: Any, axis: Any, method: str, keepdims: bool, squash_nans: bool,
              weights: Any) -> Any:
    """The quantiles of ``a`` over ``axis`` at ``q``, shape ``q.shape + reduced shape``."""
    if method not in _METHODS:
        raise ValueError(f"mlax.numpy.{name}: method can only be 'linear', 'lower', 'higher', 'midpoint', "
                         f"'nearest' or 'inverted_cdf'{where()}")
    q = asarray(q)
    if weights is not None:
        if method != "inverted_cdf":
            raise NotImplementedError(f"mlax.numpy.{name}: {method} doesn't support weights. Only method "
                                      f"'inverted_cdf' supports weights.{where()}")
        a, weights = _promote_inexact(a, weights)
        if weights.shape != a.shape:
            if axis is None:
                raise ValueError(f"mlax.numpy.{name}: weights shape must match 'a' shape when axis is "
                                 f"None{where()}")
            dims = normalize_axes(name, axis, a.ndim)
            if weights.shape != tuple(a.shape[d] for d in dims):
                raise ValueError(f"mlax.numpy.{name}: weights shape {weights.shape} must match reduction "
                                 f"axes {tuple(a.shape[d] for d in dims)}{where()}")
            weights = lax.broadcast_in_dim(weights, a.shape, dims)
    else:
        (a,) = _promote_inexact(a)
    if q.ndim > 1:
        raise ValueError(f"mlax.numpy.{name}: q must be have rank <= 1, got shape {q.shape}{where()}")
    if not front_dtypes.issubdtype(q.dtype, np.floating):
        raise TypeError(f"mlax.numpy.{name}: q must be floating point, got {q.dtype}{where()}")
    if method == "inverted_cdf" and q.dtype != a.dtype:
        raise TypeError(f"mlax.numpy.{name}: inverted_cdf needs q of the dtype of a ({a.dtype}), got "
                        f"{q.dtype}{where()}")
    x, keep_shape = _axes_last(name, a, axis)
    if x.shape[-1] == 0:
        raise TypeError(f"mlax.numpy.{name}: cannot take a quantile over an empty axis{where()}")
    nan = mx.isnan(x)
    if squash_nans:  # a positive NaN, which sorts last
        x = lax.select(nan, const_like(x, np.nan), x)
    else:
        x = lax.select(lax.broadcast_in_dim(any_(nan, axis=-1, keepdims=True), x.shape, tuple(range(x.ndim))),
                       const_like(x, np.nan), x)
    if weights is not None:
        x, weights = lax.sort_key_val(x, _axes_last(name, weights, axis)[0], dimension=x.ndim - 1)
    else:
        x = lax.sort(x, dimension=x.ndim - 1)
    if method == "inverted_cdf":
        result = _inverted_cdf(x, weights, q, squash_nans)
    else:
        result = _order_statistics(x, q, squash_nans, method)
    if keepdims:
        result = lax.reshape(result, q.shape + keep_shape)
    return lax.convert_element_type(result, a.dtype)


def _checked(name: str, a: Any, q: Any, weights: Any, out: Any, overwrite_input: bool) -> None:
    check_arraylike(name, a, q)
    if weights is not None:
        check_arraylike(name, weights)
    if overwrite_input or out is not None:
        raise ValueError(f"mlax.numpy.{name} does not support overwrite_input=True or out != None{where()}")


def _percent(name: str, q: Any) -> Any:
    """``q / 100`` in the inexact dtype of ``q``."""
    (q,) = _promote_inexact(q)
    return lax.div(q, const_like(q, 100))


def quantile(a: Any, q: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Any:
    """The ``q``-th quantiles (``q`` in [0, 1], rank 0 or 1) of ``a`` over ``axis``."""
    _checked("quantile", a, q, weights, out, overwrite_input)
    return _quantile("quantile", a, q, axis, method, keepdims, False, weights)


def nanquantile(a: Any, q: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Any:
    """``quantile`` of the non-NaN elements (NaN where a slice has none)."""
    _checked("nanquantile", a, q, weights, out, overwrite_input)
    return _quantile("nanquantile", a, q, axis, method, keepdims, True, weights)


def percentile(a: Any, q: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Any:
    """The ``q``-th percentiles (``q`` in [0, 100]) of ``a`` over ``axis``."""
    _checked("percentile", a, q, weights, out, overwrite_input)
    return _quantile("percentile", a, _percent("percentile", q), axis, method, keepdims, False, weights)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Any:
    """``percentile`` of the non-NaN elements (NaN where a slice has none)."""
    _checked("nanpercentile", a, q, weights, out, overwrite_input)
    return _quantile("nanpercentile", a, _percent("nanpercentile", q), axis, method, keepdims, True, weights)


def median(a: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """The median over ``axis``: the mean of the two middle elements for an even count."""
    _checked("median", a, 0.5, None, out, overwrite_input)
    return _quantile("median", a, 0.5, axis, "midpoint", keepdims, False, None)


def nanmedian(a: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    """``median`` of the non-NaN elements (NaN where a slice has none)."""
    _checked("nanmedian", a, 0.5, None, out, overwrite_input)
    return _quantile("nanmedian", a, 0.5, axis, "midpoint", keepdims, True, None)


# --- covariance ---------------------------------------------------------------------------

def _rank_promoted_inexact(*args: Any) -> list[Any]:
    """jnp's ``promote_args_inexact`` without full broadcasting: one inexact dtype, and lower
    ranks padded with leading 1s (so a 1-d ``y`` beside a 2-d ``m`` is one row)."""
    arrays = _promote_inexact(*args)
    broadcast_shapes_or_raise("mlax.numpy.cov", *(x.shape for x in arrays))
    rank = max(x.ndim for x in arrays)
    return [lax.reshape(x, (1,) * (rank - x.ndim) + x.shape) for x in arrays]


def _sample_weights(x: Any, fweights: Any, aweights: Any) -> tuple[Any, Any]:
    """The combined weights (None without any) and the absolute ``aweights``."""
    n = x.shape[1]
    w = None
    for label, weights in (("fweights", fweights), ("aweights", aweights)):
        if weights is None:
            continue
        check_arraylike("cov", weights)
        weights = asarray(weights)
        if weights.ndim > 1:
            raise RuntimeError(f"mlax.numpy.cov: cannot handle multidimensional {label}{where()}")
        if weights.shape[0] != n:
            raise RuntimeError(f"mlax.numpy.cov: incompatible numbers of samples and {label}{where()}")
        if label == "fweights" and not front_dtypes.issubdtype(weights.dtype, np.integer):
            raise TypeError(f"mlax.numpy.cov: fweights must be integer{where()}")
        weights = ew.absolute(weights)
        if label == "aweights":
            aweights = weights
        w = weights if w is None else ew.multiply(w, weights)
    return w, aweights


def _check_inexact_dtype(name: str, dtype: Any) -> None:
    if dtype is not None and not _is_inexact(user_dtype(name, dtype)):
        raise ValueError(f"mlax.numpy.{name}: dtype must be a subclass of float or complex; got "
                         f"dtype={dtype}{where()}")


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights: Any = None, aweights: Any = None, dtype: Any = None) -> Any:
    """The covariance matrix of the variables (rows, or columns if not ``rowvar``) of ``m``
    and ``y``, with frequency and analytic weights; squeezed, as jnp."""
    check_arraylike("cov", m, *(() if y is None else (y,)))
    if y is not None:
        m, y = _rank_promoted_inexact(m, y)
        if y.ndim > 2:
            raise ValueError(f"mlax.numpy.cov: y has more than 2 dimensions{where()}")
    else:
        (m,) = _promote_inexact(m)
    if m.ndim > 2:
        raise ValueError(f"mlax.numpy.cov: m has more than 2 dimensions{where()}")
    _check_inexact_dtype("cov", dtype)
    x = atleast_2d(m)
    if not rowvar and m.ndim != 1:
        x = transpose(x)
    if x.shape[0] == 0:
        return asarray(np.zeros((0, 0), front_dtypes.default_float()))
    if y is not None:
        y = atleast_2d(y)
        x = concatenate((x, y if rowvar or y.shape[0] == 1 else transpose(y)), axis=0)
    if x.shape[1] == 0:
        return full(() if x.shape[0] == 1 else (x.shape[0], x.shape[0]), np.nan, dtype=x.dtype)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w, aweights = _sample_weights(x, fweights, aweights)
    if dtype is not None:
        x = mx.astype(x, dtype)
        w = None if w is None else mx.astype(w, dtype)
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        f = x.shape[1] - ddof
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = w_sum - ddof
    else:
        f = w_sum - ddof * sum_(w * aweights) / w_sum
    x = x - avg[:, None]
    x_t = transpose(x if w is None else x * w[None, :])
    return squeeze(ew.true_divide(dot(x, x_t), f))


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, dtype: Any = None) -> Any:
    """Pearson correlation coefficients: ``cov`` scaled by the standard deviations, clipped to
    [-1, 1]."""
    check_arraylike("corrcoef", x)
    _check_inexact_dtype("corrcoef", dtype)
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:  # one variable: 1, or NaN for nan/nan, inf/inf, 0/0
        return ew.divide(c, c)
    stddev = mx.astype(ew.sqrt(diag(c)), c.dtype)
    c = c / stddev[:, None] / stddev[None, :]
    return mx.clip(c, -1, 1)

