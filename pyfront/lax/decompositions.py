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
from mlax.lax.common import operand as as_operand
from mlax.lax.control_flow import fori_loop


def _swap_last(x: Any) -> Any:
    from mlax.numpy import swapaxes

    return swapaxes(x, -1, -2)


def symmetrize(x: Any) -> Any:
    """``(x + x^H) / 2`` of each matrix (jax.lax.linalg's helper; true division, as jnp's)."""
    from mlax.numpy import conj, true_divide

    return true_divide(x + conj(_swap_last(x)), 2)


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
        from mlax.numpy import expand_dims

        b = expand_dims(b, -1 if left_side else -2)
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
    import mlax.numpy as mnp
    pivots = as_operand(pivots)
    *batch, k = abstractify(pivots).shape
    size = int(permutation_size)
    if size < k:
        raise ValueError(f"Output permutation size {size} has to exceed the trailing dimension of the "
                         f"pivots. Got pivots size {k}")
    positions = mnp.arange(size, dtype=np.int32)
    start = mnp.broadcast_to(positions, (*batch, size))
    if size == 0 or k == 0:
        return start

    def swap(i: Any, perm: Any) -> Any:
        j = mnp.take(pivots, i, axis=-1)[..., None]
        at_i, at_j = positions == i, positions == j
        value_i = mnp.sum(mnp.where(at_i, perm, 0), axis=-1, keepdims=True)
        value_j = mnp.sum(mnp.where(at_j, perm, 0), axis=-1, keepdims=True)
        return mnp.where(at_i, value_j, mnp.where(at_j, value_i, perm)).astype(np.int32)

    return fori_loop(0, k, swap, start)


__all__ = ["cholesky", "lu", "lu_pivots_to_permutation", "symmetrize", "triangular_solve"]
