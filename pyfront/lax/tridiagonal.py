"""mlax.lax.linalg.tridiagonal_solve (jax.lax.linalg's), built in the front end rather than as a
primitive: LAPACK's ``?gtsv`` algorithm (Gaussian elimination with partial pivoting, the routine
jax calls on CPU) written as two ``lax.scan``s over the rows, every batch element at once.

- Forward: at row i, keep it (``|d_i| >= |dl_{i+1}|``) or swap it with row i+1, eliminate the
  subdiagonal entry, and emit row i of U (diagonal, first and second superdiagonals: a swap
  fills the second) and its right-hand side; back substitution then runs upwards. A zero pivot
  makes the matrix singular: its solution is NaN, as jax makes it from gtsv's ``info``.
- Derivatives are jax's rules, as a ``custom_jvp``: ``x' = solve(b' - T' x)``, ``T'`` the
  tridiagonal matrix of the diagonals' tangents. The solve is linear in its right-hand side
  (the pivoting and the multipliers depend on the diagonals only), so reverse mode transposes
  it; jax's transpose rule solves with the transposed diagonals instead: the same cotangent up
  to rounding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mlax.core import abstractify
from mlax.custom_derivatives import custom_jvp
from mlax.lax.common import operand as as_operand

__all__ = ["tridiagonal_solve"]


def _magnitude(x: Any) -> Any:
    """The pivoting magnitude: |x|, or |re| + |im| for complex x (LAPACK's CABS1)."""
    from mlax.numpy import abs as abs_
    from mlax.numpy import imag, iscomplexobj, real

    return abs_(real(x)) + abs_(imag(x)) if iscomplexobj(x) else abs_(x)


def _eliminate(carry: tuple[Any, Any], row: tuple[Any, Any, Any]
               ) -> tuple[tuple[Any, Any], tuple[Any, Any, Any, Any, Any]]:
    """One step of gtsv's elimination on the matrix: ``carry`` is row i as reduced so far
    (diagonal, first superdiagonal), ``row`` the next one (subdiagonal, diagonal,
    superdiagonal). Returns row i+1 reduced, and whether rows i and i+1 swap, the multiplier,
    and row i of U (diagonal, first and second superdiagonals)."""
    from mlax.numpy import where, zeros_like

    (dc, uc), (low, dn, un) = carry, row
    swap = _magnitude(dc) < _magnitude(low)
    one = np.array(1, dc.dtype)
    fact = where(swap, dc / where(swap, low, one), low / where(swap, one, dc))  # no inf in the other branch
    reduced = (where(swap, uc - fact * dn, dn - fact * uc), where(swap, -fact * un, un))
    return reduced, (swap, fact, where(swap, low, dc), where(swap, dn, uc), where(swap, un, zeros_like(un)))


def _eliminate_rhs(bc: Any, step: tuple[Any, Any, Any]) -> tuple[Any, Any]:
    """The same step on the right-hand sides (linear in them: a scan of its own, so that reverse
    mode sees the matrix's steps as constants)."""
    from mlax.numpy import where

    swap, fact, bn = step
    swap, fact = swap[..., None], fact[..., None]
    return where(swap, bc - fact * bn, bn - fact * bc), where(swap, bn, bc)


def _back_substitute(carry: tuple[Any, Any], row: tuple[Any, Any, Any, Any]) -> tuple[tuple[Any, Any], Any]:
    """``x_i = (b_i - u1_i x_{i+1} - u2_i x_{i+2}) / d_i``, carrying (x_{i+1}, x_{i+2})."""
    (x1, x2), (d, u1, u2, b) = carry, row
    x = (b - u1[..., None] * x1 - u2[..., None] * x2) / d[..., None]
    return (x, x1), x


def _gtsv(dl: Any, d: Any, du: Any, b: Any) -> Any:
    """The solutions of the batched systems, the row axis moved first for the scans."""
    from mlax.lax import scan
    from mlax.numpy import any as any_
    from mlax.numpy import concatenate, moveaxis, nan, where, zeros_like

    m = d.shape[-1]
    if m == 0:
        return b
    dl, d, du = (moveaxis(v, -1, 0) for v in (dl, d, du))
    b = moveaxis(b, -2, 0)
    du = concatenate([du[:-1], zeros_like(du[-1:])])  # du[m-1] is outside the matrix: ignored
    (last_d, last_u), b_last = (d[0], du[0]), b[0]
    upper = (last_d[None], last_u[None], zeros_like(last_d)[None])
    rhs = b_last[None]
    if m > 1:
        (last_d, last_u), (swaps, facts, *rows) = scan(_eliminate, (last_d, last_u), (dl[1:], d[1:], du[1:]))
        b_last, rhs = scan(_eliminate_rhs, b_last, (swaps, facts, b[1:]))
        upper = tuple(concatenate([r, c[None]]) for r, c in zip(rows, (last_d, last_u, zeros_like(last_d)),
                                                                 strict=True))
        rhs = concatenate([rhs, b_last[None]])
    zero = zeros_like(b[0])
    _, x = scan(_back_substitute, (zero, zero), (*upper, rhs), reverse=True)
    singular = any_(upper[0] == 0, axis=0)[..., None, None]
    return where(singular, np.array(nan, b.dtype), moveaxis(x, 0, -2))


def _tridiagonal_product(dl: Any, d: Any, du: Any, x: Any) -> Any:
    """T x for the tridiagonal T of (dl, d, du), in jax's order of sums."""
    from mlax.numpy import pad

    widths = [(0, 0)] * (x.ndim - 2)
    y = d[..., None] * x
    y = y + pad(dl[..., 1:, None] * x[..., :-1, :], [*widths, (1, 0), (0, 0)])
    return y + pad(du[..., :-1, None] * x[..., 1:, :], [*widths, (0, 1), (0, 0)])


@custom_jvp
def _solve(dl: Any, d: Any, du: Any, b: Any) -> Any:
    return _gtsv(dl, d, du, b)


@_solve.defjvp
def _solve_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    dl, d, du, b = primals
    dl_dot, d_dot, du_dot, b_dot = tangents
    x = _gtsv(dl, d, du, b)
    return x, _gtsv(dl, d, du, b_dot - _tridiagonal_product(dl_dot, d_dot, du_dot, x))


def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any, *, perturb_singular: bool = False) -> Any:
    """X with ``T X = b`` for the tridiagonal matrices T whose sub-, main and superdiagonals are
    ``dl``, ``d``, ``du`` (..., m) (``dl[..., 0]`` and ``du[..., m-1]`` are ignored) and b
    (..., m, k); NaN for a singular T. ``perturb_singular`` is not supported, as on jax's
    platforms without the perturbed LAPACK kernel."""
    if perturb_singular:
        raise NotImplementedError("perturb_singular=True is not supported on this platform.")
    dl, d, du, b = (as_operand(v) for v in (dl, d, du, b))
    avals = [abstractify(v) for v in (dl, d, du, b)]
    if not all(a.shape == avals[1].shape for a in avals[:3]):
        raise TypeError("tridiagonal_solve requires that all diagonal arguments have the same shape.")
    if avals[3].ndim < 2 or avals[1].shape != avals[3].shape[:-1]:
        raise TypeError("tridiagonal_solve requires that the leading ndim-1 dimensions of b equal the "
                        "dimensions of the diagonal arguments.")
    dtypes = {a.dtype for a in avals}
    if len(dtypes) != 1 or not np.issubdtype(avals[3].dtype, np.inexact):
        raise TypeError(f"tridiagonal_solve requires floating-point or complex operands of one dtype, got "
                        f"{', '.join(str(a.dtype) for a in avals)}")
    return _solve(dl, d, du, b)
