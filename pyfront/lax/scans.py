"""mlax.lax associative_scan and cumlogsumexp.

associative_scan is the parallel prefix scan of Blelloch (1990): combine neighbouring pairs,
scan the half-length result recursively (it holds the odd-indexed outputs), then one more
combine gives the even-indexed ones, and the two interleave. That is 2 log2(n) calls of
``fn`` on whole slices, each vectorized, and the same pairing jax uses, so results agree to
the bit for exact arithmetic and to rounding otherwise. cumlogsumexp is that scan with
logaddexp (jax differentiates its cumulative reductions through the same scan).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from jax import tree_util

from mlax.core import abstractify
from mlax.dialect import dtypes as ir_dtypes
from mlax.lax.common import operand as as_operand
from mlax.lax.shape import concatenate, expand_dims, reshape, rev, slice_in_dim
from mlax.lax.special import logaddexp
from mlax.source_info import where


def _interleave(even: Any, odd: Any, axis: int) -> Any:
    """``even[0], odd[0], even[1], odd[1], ...`` along ``axis`` (``even`` may be one longer)."""
    n_odd = odd.shape[axis]
    pairs = concatenate([expand_dims(slice_in_dim(even, 0, n_odd, axis=axis), (axis + 1,)),
                         expand_dims(odd, (axis + 1,))], axis + 1)
    shape = list(odd.shape)
    shape[axis] = 2 * n_odd
    merged = reshape(pairs, tuple(shape))
    if even.shape[axis] == n_odd:
        return merged
    return concatenate([merged, slice_in_dim(even, n_odd, n_odd + 1, axis=axis)], axis)


Combine = Callable[[list[Any], list[Any]], list[Any]]


def _prefix_scan(combine: Combine, elems: list[Any], axis: int) -> list[Any]:
    n = elems[0].shape[axis]
    if n < 2:
        return elems
    pick = lambda start, stop=None, stride=1: [slice_in_dim(e, start, stop, stride, axis) for e in elems]  # noqa: E731
    odd = _prefix_scan(combine, combine(pick(0, n - 1, 2), pick(1, None, 2)), axis)
    # Output 2k (k >= 1) is output 2k - 1 combined with input 2k.
    tail = combine([slice_in_dim(o, 0, n // 2 - (1 - n % 2), axis=axis) for o in odd], pick(2, None, 2))
    first = [slice_in_dim(e, 0, 1, axis=axis) for e in elems]
    even = [concatenate([f, t], axis) for f, t in zip(first, tail, strict=True)]
    return [_interleave(e, o, axis) for e, o in zip(even, odd, strict=True)]


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """Inclusive scan of the associative ``fn`` over ``axis`` of every array of the pytree
    ``elems``: output k combines inputs 0..k (``reverse``: inputs k..n-1, combined from the end)."""
    if not callable(fn):
        raise TypeError(f"mlax.lax.associative_scan: fn argument should be callable{where()}")
    flat, tree = tree_util.tree_flatten(elems)
    if not flat:
        raise ValueError(f"mlax.lax.associative_scan: elems must contain at least one array{where()}")
    flat = [as_operand(e) for e in flat]
    ndim = abstractify(flat[0]).ndim
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"mlax.lax.associative_scan: axis {axis} is out of bounds for array of dimension "
                         f"{ndim}{where()}")
    axis %= ndim
    sizes = [abstractify(e).shape[axis] if abstractify(e).ndim > axis else None for e in flat]
    if len(set(sizes)) != 1:
        raise ValueError(f"mlax.lax.associative_scan: array inputs must have the same size along the scanned "
                         f"axis, saw shapes {[abstractify(e).shape for e in flat]}{where()}")

    def combine(a: list[Any], b: list[Any]) -> list[Any]:
        out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        return [as_operand(o) for o in tree_util.tree_leaves(out)]

    if reverse:
        flat = [rev(e, (axis,)) for e in flat]
    out = _prefix_scan(combine, flat, axis)
    if reverse:
        out = [rev(e, (axis,)) for e in out]
    return tree_util.tree_unflatten(tree, out)


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Running ``log(sum(exp(x)))`` along ``axis`` (floats), from the end if ``reverse``."""
    x = as_operand(operand)
    axis = operator.index(axis)
    if not 0 <= axis < x.ndim:
        raise ValueError(f"mlax.lax.cumlogsumexp: axis {axis} is out of bounds for array of shape "
                         f"{x.shape}{where()}")
    if not ir_dtypes.is_float(x.dtype):
        raise TypeError(f"mlax.lax.cumlogsumexp: operand must be a float, got {x.dtype}{where()}")
    return associative_scan(logaddexp, x, reverse=reverse, axis=axis)


__all__ = ["associative_scan", "cumlogsumexp"]
