"""mlax.scipy.stats' descriptive statistics (as jax.scipy.stats): mode, rankdata and sem.

mode and rankdata work on sorted slices: a value's run of equal neighbours (NaNs count as
equal, as jnp.unique's ``equal_nan``) gives its count and its ranks, so every slice is done at
once instead of one jnp.unique per slice. Like jax they support only ``nan_policy="propagate"``
(sem also ``"omit"``); a slice of rankdata holding a NaN ranks all NaN.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from mlax import dtypes, lax
from mlax import numpy as mnp
from mlax.numpy.util import check_arraylike, normalize_axis, promote_args_inexact

__all__ = ["ModeResult", "mode", "rankdata", "sem"]

_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


class ModeResult(NamedTuple):
    mode: Any
    count: Any


def _check_nan_policy(fname: str, nan_policy: str) -> None:
    """jax's messages: an unknown policy is a ValueError, "omit" and "raise" are not implemented."""
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy == "omit":
        raise NotImplementedError(f"{fname}: logic for `nan_policy` of omit is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(f"{fname}: whether the input holds NaNs is not known under jit; "
                                  "check for NaNs outside of the function")


def _run_bounds(s: Any) -> tuple[Any, Any]:
    """For each element of ``s`` (sorted along its last axis): the index where its run of equal
    values starts and the index one past its end."""
    n = s.shape[-1]
    prev, cur = s[..., :-1], s[..., 1:]
    differs = prev != cur
    if mnp.issubdtype(s.dtype, mnp.inexact):
        differs = differs & ~(mnp.isnan(prev) & mnp.isnan(cur))
    true = mnp.ones((*s.shape[:-1], 1), bool)
    starts_run = mnp.concatenate([true, differs], axis=-1)
    ends_run = mnp.concatenate([differs, true], axis=-1)
    index = lax.broadcasted_iota(np.int32, s.shape, s.ndim - 1)
    start = lax.cummax(mnp.where(starts_run, index, 0), axis=s.ndim - 1)
    stop = lax.cummin(mnp.where(ends_run, index + 1, n), axis=s.ndim - 1, reverse=True)
    return start, stop


def mode(a: Any, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False) -> ModeResult:
    """The most common value along ``axis`` (the smallest among ties) and its count."""
    check_arraylike("mode", a)
    x = mnp.atleast_1d(a)
    _check_nan_policy("mode", nan_policy)
    if axis is None:
        out_shape = (1,) * x.ndim if keepdims else ()
        rows = mnp.ravel(x)[None]
    else:
        axis = normalize_axis("mode", axis, x.ndim)
        out_shape = tuple(1 if i == axis else d for i, d in enumerate(x.shape) if keepdims or i != axis)
        moved = mnp.moveaxis(x, axis, -1)
        rows = mnp.reshape(moved, (math.prod(moved.shape[:-1]), moved.shape[-1]))
    if rows.shape[1] == 0:
        float_dtype = dtypes.default_float()
        return ModeResult(mnp.full(out_shape, np.nan, float_dtype), mnp.zeros(out_shape, float_dtype))
    s = lax.sort(rows, dimension=1)
    start, stop = _run_bounds(s)
    counts = (stop - start).astype(dtypes.default_int())
    best = mnp.argmax(counts, axis=1, keepdims=True)
    values = mnp.take_along_axis(s, best, axis=1)
    return ModeResult(mnp.reshape(values, out_shape), mnp.reshape(mnp.max(counts, axis=1), out_shape))


def _ranks(a: Any, method: str) -> Any:
    """The ranks of each row of ``a`` (rank 2) by ``method``; rows holding a NaN are NaN."""
    out_dtype = dtypes.default_float()
    index = lax.broadcasted_iota(np.int32, a.shape, 1)
    s, order = lax.sort_key_val(a, index, dimension=1)
    _, inverse = lax.sort_key_val(order, index, dimension=1)
    if method == "ordinal":
        ranks = inverse + 1
    else:
        differs = s[:, 1:] != s[:, :-1]
        starts_run = mnp.concatenate([mnp.ones((a.shape[0], 1), bool), differs], axis=1)
        if method == "dense":
            ranks = mnp.take_along_axis(mnp.cumsum(starts_run, axis=1), inverse, axis=1)
        else:
            start, stop = (mnp.take_along_axis(b, inverse, axis=1) for b in _run_bounds(s))
            start, stop = start.astype(out_dtype), stop.astype(out_dtype)
            ranks = {"min": lambda: start + 1, "max": lambda: stop,
                     "average": lambda: np.array(0.5, out_dtype) * (stop + start + 1)}[method]()
    ranks = ranks.astype(out_dtype)
    if mnp.issubdtype(a.dtype, mnp.inexact):
        ranks = mnp.where(mnp.any(mnp.isnan(a), axis=1, keepdims=True), np.array(np.nan, out_dtype), ranks)
    return ranks


def rankdata(a: Any, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> Any:
    """The ranks (from 1) of ``a`` along ``axis`` (of the flattened array without one); ties
    ranked by ``method``: "average", "min", "max", "dense" or "ordinal"."""
    check_arraylike("rankdata", a)
    _check_nan_policy("rankdata", nan_policy)
    if method not in _RANK_METHODS:
        raise ValueError(f"unknown method '{method}'")
    a = mnp.asarray(a)
    if axis is None:
        return _ranks(mnp.ravel(a)[None], method)[0]
    axis = normalize_axis("rankdata", axis, a.ndim)
    moved = mnp.moveaxis(a, axis, -1)
    rows = mnp.reshape(moved, (math.prod(moved.shape[:-1]), moved.shape[-1]))
    return mnp.moveaxis(mnp.reshape(_ranks(rows, method), moved.shape), -1, axis)


def sem(a: Any, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Any:
    """The standard error of the mean, ``std(a, ddof) / sqrt(n)``; with ``nan_policy="omit"``
    over the non-NaN values."""
    (b,) = promote_args_inexact("sem", a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return mnp.std(b, axis, ddof=ddof, keepdims=keepdims) / mnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = mnp.sum(~mnp.isnan(b), axis, keepdims=keepdims)
        return mnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / mnp.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported")
