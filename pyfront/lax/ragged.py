"""mlax.lax.ragged_dot: a matrix product whose lhs rows are split into consecutive groups,
group g multiplied by ``rhs[g]``.

A composite: every row is multiplied by every group's matrix in one dot_general and the
row's own group is selected (rows past the last group get zeros, as in jax). That costs the
number of groups times a plain product, fine for the few experts of a mixture-of-experts
layer; mlax has no grouped-matmul op to do better.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax.lax import elementwise as ew
from mlax.lax.common import operand as as_operand
from mlax.lax.linalg import dot_general
from mlax.lax.reductions import cumsum, reduce_sum
from mlax.lax.shape import broadcast_in_dim, broadcasted_iota
from mlax.source_info import where


def ragged_dot(lhs: Any, rhs: Any, group_sizes: Any, precision: Any = None,
               preferred_element_type: Any = None, group_offset: Any = None) -> Any:
    """``lhs`` [m, k] times ``rhs`` [g, k, n] by groups: rows ``sum(group_sizes[:i])`` up to
    ``sum(group_sizes[:i + 1])`` use ``rhs[i]``; the result is [m, n]."""
    if group_offset is not None:
        raise NotImplementedError(f"mlax.lax.ragged_dot: group_offset is not supported (nor by jax's "
                                  f"CPU lowering){where()}")
    lhs, rhs, sizes = as_operand(lhs), as_operand(rhs), as_operand(group_sizes)
    if lhs.ndim != 2 or rhs.ndim != 3 or sizes.ndim != 1:
        raise TypeError(f"mlax.lax.ragged_dot: expects lhs [m, k], rhs [g, k, n] and group_sizes [g], got "
                        f"shapes {lhs.shape}, {rhs.shape} and {sizes.shape}{where()}")
    (m, k), (g, k_rhs, _) = lhs.shape, rhs.shape
    if k != k_rhs or sizes.shape[0] != g:
        raise TypeError(f"mlax.lax.ragged_dot: shapes {lhs.shape}, {rhs.shape} and {sizes.shape} do not "
                        f"agree (lhs [m, k], rhs [g, k, n], group_sizes [g]){where()}")
    if not np.issubdtype(sizes.dtype, np.integer):
        raise TypeError(f"mlax.lax.ragged_dot: group_sizes must be integers, got {sizes.dtype}{where()}")
    every = dot_general(lhs, rhs, (((1,), (1,)), ((), ())), precision, preferred_element_type)  # [m, g, n]
    ends = cumsum(sizes, 0)
    row = broadcasted_iota(sizes.dtype, (m, g), 0)
    mine = ew.bitwise_and(ew.ge(row, broadcast_in_dim(ew.sub(ends, sizes), (m, g), (1,))),
                          ew.lt(row, broadcast_in_dim(ends, (m, g), (1,))))
    zero = broadcast_in_dim(np.zeros((), every.dtype), every.shape, ())
    picked = ew.select(broadcast_in_dim(mine, every.shape, (0, 1)), every, zero)
    return ew.convert_element_type(reduce_sum(picked, (1,)), every.dtype, every.weak_type)


__all__ = ["ragged_dot"]
