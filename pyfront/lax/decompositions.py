"""mlax.lax.linalg's decompositions: cholesky, triangular_solve, lu, lu_pivots_to_permutation (jax's
`jax.lax.linalg` names and signatures), on the dialect's ops (dialect/ops/decompositions.py).

The wrappers do what jax's do around its primitives: cholesky symmetrizes its operand first
(``(x + x^T) / 2``, so an integer matrix becomes float) unless told not to; triangular_solve takes
a b of one rank less as a vector (the singleton column or row jax adds and removes).
lu_pivots_to_permutation is jax's loop of row swaps, batched with one-hot selections.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax.core import abstractify, bind
from mlax.lax import elementwise as ew
from mlax.lax.common import operand as as_operand
from mlax.lax.control_flow import fori_loop
from mlax.lax.dynamic_slicing import dynamic_index_in_dim
from mlax.lax.elementwise import broadcast_select as where
from mlax.lax.reductions import reduce_sum
from mlax.lax.shape import broadcast_in_dim, expand_dims, iota, moveaxis


def symmetrize(x: Any) -> Any:
    """``(x + x^H) / 2`` of each matrix (jax.lax.linalg's helper; true division, as jnp's)."""
    x = as_operand(x)
    transposed = moveaxis(x, -1, -2)
    return (x + (ew.conj(transposed) if np.issubdtype(x.dtype, np.complexfloating) else transposed)) / 2


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """The lower Cholesky factor of each matrix of ``x`` (..., n, n); all NaN where one is not
    positive definite, as jax."""
    x = as_operand(x)
    if symmetrize_input:
        x = symmetrize(x)
    return bind("cholesky", x)


def triangular_solve(a: Any, b: Any, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Any:
    """X with op(a) X = b (``left_side``) or X op(a) = b, a triangular (only its ``lower`` or upper
    triangle read); a ``b`` of one rank less than ``a`` is a (batch of) vector(s)."""
    a, b = as_operand(a), as_operand(b)
    a_rank, b_rank = abstractify(a).ndim, abstractify(b).ndim
    if a_rank >= 2 and b_rank != a_rank and b_rank != a_rank - 1:
        raise TypeError(f"All inputs to triangular_solve must have the same number of batch dimensions, but "
                        f"got {[a_rank - 2, b_rank - 2]} batch dimensions for the inputs.")
    singleton = b_rank == a_rank - 1
    if singleton:
        b = expand_dims(b, (b_rank if left_side else b_rank - 1,))
    out = bind("triangular_solve", a, b, left_side=bool(left_side), lower=bool(lower),
               transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
               unit_diagonal=bool(unit_diagonal))
    if singleton:
        out = out[..., 0] if left_side else out[..., 0, :]
    return out


def lu(x: Any) -> list[Any]:
    """LU decomposition with partial pivoting of each matrix of ``x`` (..., m, n): [lu, pivots,
    permutation] (a list, as jax's), pivots and permutation int32, with ``x[permutation] == L @ U``."""
    return list(bind("lu", as_operand(x)))


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The permutation of ``range(permutation_size)`` the row swaps ``pivots`` (..., k) make, in
    order (row i with row pivots[i]); int32 (..., permutation_size)."""
    pivots = as_operand(pivots)
    *batch, k = abstractify(pivots).shape
    size = int(permutation_size)
    if size < k:
        raise ValueError(f"Output permutation size {size} has to exceed the trailing dimension of the "
                         f"pivots. Got pivots size {k}")
    positions = iota(np.int32, size)
    start = broadcast_in_dim(positions, (*batch, size), (len(batch),))
    if size == 0 or k == 0:
        return start

    def swap(i: Any, perm: Any) -> Any:
        j = dynamic_index_in_dim(pivots, i, len(batch))
        at_i, at_j = positions == i, positions == j
        value_i, value_j = (expand_dims(reduce_sum(where(at, perm, 0), (len(batch),)), (len(batch),))
                            for at in (at_i, at_j))
        return where(at_i, value_j, where(at_j, value_i, perm))

    return fori_loop(0, k, swap, start)


__all__ = ["cholesky", "lu", "lu_pivots_to_permutation", "symmetrize", "triangular_solve"]
