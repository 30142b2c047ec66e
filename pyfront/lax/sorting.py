"""mlax.lax sorting: sort (multi-operand, num_keys), sort_key_val and top_k (jax.lax names and
signatures), built on the dialect's sorting ops.

`sort_permutation` orders by one key, so N keys are a least-significant-first chain of
stable sorts whose permutations compose (see dialect/ops/sorting.py); every sort is stable,
which jax.lax allows for any `is_stable`. top_k is the dialect's op.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlax.core import abstractify, bind
from mlax.lax.common import operand as as_operand


def sort_permutation(keys: Any, dimension: int = -1) -> Any:
    """The i32 indices that stably sort ``keys`` along ``dimension`` (NaN last, -0.0 == 0.0)."""
    keys = as_operand(keys)
    return bind("sort_permutation", keys, dimension=_dimension(dimension, abstractify(keys).ndim))


def apply_permutation(operand: Any, indices: Any, dimension: int = -1) -> Any:
    """``operand`` read along ``dimension`` at ``indices`` (a permutation, as sort_permutation gives)."""
    operand = as_operand(operand)
    return bind("apply_permutation", operand, as_operand(indices),
                dimension=_dimension(dimension, abstractify(operand).ndim))


def _dimension(dimension: int, ndim: int) -> int:
    """A negative dimension counts from the end (as jax.lax.sort); range errors are the op's."""
    return int(dimension) + ndim if int(dimension) < 0 else int(dimension)


def _order(keys: Sequence[Any], dimension: int) -> Any:
    """The permutation sorting lexicographically by ``keys``: stable sorts, last key first."""
    perm = None
    for key in reversed(keys):
        read = key if perm is None else apply_permutation(key, perm, dimension)
        step = sort_permutation(read, dimension)
        perm = step if perm is None else apply_permutation(perm, step, dimension)
    return perm


def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """Sort ``operand`` (an array or a sequence of arrays of one shape) along ``dimension``,
    lexicographically by the first ``num_keys`` operands; the others follow their keys."""
    single = not isinstance(operand, (tuple, list))
    operands = [as_operand(x) for x in ([operand] if single else operand)]
    shapes = {abstractify(x).shape for x in operands}
    if len(shapes) != 1:
        raise TypeError(f"sort: operands must have one shape, got {sorted(shapes)}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort: num_keys={num_keys} must be in [1, {len(operands)}]")
    ndim = abstractify(operands[0]).ndim
    if ndim == 0:
        raise TypeError("sort: operands must have rank at least 1")
    dimension = _dimension(dimension, ndim)
    perm = _order(operands[:num_keys], dimension)
    out = tuple(apply_permutation(x, perm, dimension) for x in operands)
    return out[0] if single else out


def sort_key_val(keys: Any, values: Any, dimension: int = -1, is_stable: bool = True) -> tuple[Any, Any]:
    """Sort ``keys`` along ``dimension`` and ``values`` in the same order."""
    return sort((keys, values), dimension=dimension, is_stable=is_stable, num_keys=1)


def top_k(operand: Any, k: int) -> tuple[Any, Any]:
    """The ``k`` largest elements along the last axis, descending, and their i32 indices
    (XLA's TopK order: NaN largest, +0.0 above -0.0; ties: the lower index first)."""
    return bind("top_k", as_operand(operand), k=int(k))


__all__ = ["apply_permutation", "sort", "sort_key_val", "sort_permutation", "top_k"]
