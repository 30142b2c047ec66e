"""mlax.lax.linalg.tridiagonal_solve (jax.lax.linalg's), built in the front end rather than as a
primitive: the algorithms of the kernels jax calls on CPU, written as ``lax.scan``s over the
rows, every batch element at once.

- Plain: LAPACK's ``?gtsv`` (Gaussian elimination with partial pivoting). At row i, keep it
  (``|d_i| >= |dl_{i+1}|``) or swap it with row i+1, eliminate the subdiagonal entry, and emit
  row i of U (diagonal, first and second superdiagonals: a swap fills the second) and its
  right-hand side; back substitution then runs upwards. A zero pivot makes the matrix
  singular: its solution is NaN, as jax makes it from gtsv's ``info``.
- ``perturb_singular``: jaxlib's ``tridiagonal_solve_perturbed`` kernel (LAPACK's ``?lagtf`` +
  ``?lagts``): the rows are compared after scaling by their 1-norms, and in back substitution
  a pivot below 1 that would overflow ``rhs / pivot`` is pushed away from zero by
  ``eps * max|U|``, doubling, (or the row scaled up, below the safe minimum), so a singular
  matrix still gives a finite answer: inverse iteration's solve at an eigenvalue.
- On XLA the same scans compile with XLA's rounding (it contracts products into sums), so there
  the values agree with jax's to rounding, where eagerly and natively they are jax's bits;
  calling jaxlib's FFI target itself would take an op (the front end emits none).
- Derivatives are jax's rules, as a ``custom_jvp``: ``x' = solve(b' - T' x)``, ``T'`` the
  tridiagonal matrix of the diagonals' tangents. The solve is linear in its right-hand side
  (the pivoting and the multipliers depend on the diagonals only; the perturbed pivots are
  the primal's), so reverse mode transposes it; jax's transpose rule solves with the
  transposed diagonals instead: the same cotangent up to rounding, while no pivot is
  perturbed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mlax.core import abstractify
from mlax.custom_derivatives import custom_jvp
from mlax.lax import elementwise as ew
from mlax.lax.common import operand as as_operand
from mlax.lax.control_flow import scan, while_loop
from mlax.lax.creation import full_like
from mlax.lax.elementwise import broadcast_select as where
from mlax.lax.reductions import reduce_max, reduce_or
from mlax.lax.shape import concatenate, moveaxis, pad

__all__ = ["tridiagonal_solve"]

Step = Callable[[Any, Any], tuple[Any, Any]]


def _zeros_like(x: Any) -> Any:
    return full_like(x, 0)


def _is_complex(x: Any) -> bool:
    return np.issubdtype(x.dtype, np.complexfloating)


def _real(x: Any) -> Any:
    """jnp.real's: the real part of complex ``x``, else ``x``."""
    return ew.real(x) if _is_complex(x) else x


def _with_sign_of(magnitude: Any, sign: Any) -> Any:
    """jnp.copysign of two reals of one dtype: ``|magnitude|`` with ``sign``'s sign bit."""
    bits = ew.bitcast_convert_type(sign, np.dtype(f"int{8 * sign.dtype.itemsize}"))
    magnitude = ew.abs(magnitude)
    return where(bits < 0, ew.neg(magnitude), magnitude)


def _magnitude(x: Any) -> Any:
    """gtsv's pivoting magnitude: |x|, or |re| + |im| for complex x (LAPACK's CABS1)."""
    return ew.abs(ew.real(x)) + ew.abs(ew.imag(x)) if _is_complex(x) else ew.abs(x)


def _multiplier(swap: Any, dc: Any, low: Any) -> Any:
    """``dc / low`` where the rows swap, else ``low / dc``, with no inf in the branch not taken."""
    one = np.array(1, dc.dtype)
    return where(swap, dc / where(swap, low, one), low / where(swap, one, dc))


def _eliminate(carry: tuple[Any, Any], row: tuple[Any, Any, Any]
               ) -> tuple[tuple[Any, Any], tuple[Any, Any, Any, Any, Any]]:
    """One step of gtsv's elimination on the matrix: ``carry`` is row i as reduced so far
    (diagonal, first superdiagonal), ``row`` the next one (subdiagonal, diagonal,
    superdiagonal). Returns row i+1 reduced, and whether rows i and i+1 swap, the multiplier,
    and row i of U (diagonal, first and second superdiagonals)."""
    (dc, uc), (low, dn, un) = carry, row
    swap = _magnitude(dc) < _magnitude(low)
    fact = _multiplier(swap, dc, low)
    reduced = (where(swap, uc - fact * dn, dn - fact * uc), where(swap, -fact * un, un))
    return reduced, (swap, fact, where(swap, low, dc), where(swap, dn, uc), where(swap, un, _zeros_like(un)))


def _eliminate_scaled(carry: tuple[Any, Any, Any], row: tuple[Any, Any, Any]
                      ) -> tuple[tuple[Any, Any, Any], tuple[Any, Any, Any, Any, Any]]:
    """lagtf's step: as ``_eliminate``, but the pivots compared are each row's entry over the
    row's 1-norm (``scale``, carried), and a zero subdiagonal entry leaves both rows as
    they are."""
    (dc, uc, scale), (low, dn, un) = carry, row
    scale_next = ew.abs(low) + ew.abs(dn) + ew.abs(un)  # un is 0 on the last row
    kept = low == 0
    piv1 = where(dc == 0, _zeros_like(scale), ew.abs(dc) / scale)
    swap = ~kept & (ew.abs(low) / scale_next > piv1)
    fact = where(kept, _zeros_like(dc), _multiplier(swap, dc, low))
    d_next = where(swap, uc - fact * dn, where(kept, dn, dn - fact * uc))
    u_next = where(swap, -fact * un, un)
    scale = where(swap, ew.abs(d_next) + ew.abs(u_next), scale_next)
    return (d_next, u_next, scale), (swap, fact, where(swap, low, dc), where(swap, dn, uc),
                                     where(swap, un, _zeros_like(un)))


def _eliminate_rhs(bc: Any, step: tuple[Any, Any, Any]) -> tuple[Any, Any]:
    """The same step on the right-hand sides (linear in them: a scan of its own, so that reverse
    mode sees the matrix's steps as constants)."""
    swap, fact, bn = step
    swap, fact = swap[..., None], fact[..., None]
    return where(swap, bc - fact * bn, bn - fact * bc), where(swap, bn, bc)


def _factor(step: Step, dl: Any, d: Any, du: Any, start: tuple[Any, ...]) -> tuple[Any, Any, tuple[Any, ...]]:
    """The row swaps, the multipliers and the rows of U (diagonal, first and second
    superdiagonals), of the rows-first diagonals, by ``step`` from the first row ``start``."""
    zero = _zeros_like(d[0])
    if d.shape[0] == 1:
        none = _zeros_like(d[1:])
        return none != 0, none, (d, du, _zeros_like(d))
    last, (swaps, facts, *rows) = scan(step, start, (dl[1:], d[1:], du[1:]))
    upper = tuple(concatenate([r, c[None]], 0) for r, c in zip(rows, (last[0], last[1], zero), strict=True))
    return swaps, facts, upper


def _forward(swaps: Any, facts: Any, b: Any) -> Any:
    """L^-1 P b, the right-hand sides (rows first) as the elimination leaves them."""
    if b.shape[0] == 1:
        return b
    b_last, rhs = scan(_eliminate_rhs, b[0], (swaps, facts, b[1:]))
    return concatenate([rhs, b_last[None]], 0)


def _back_substitute(carry: tuple[Any, Any], row: tuple[Any, Any, Any, Any]) -> tuple[tuple[Any, Any], Any]:
    """``x_i = (b_i - u1_i x_{i+1} - u2_i x_{i+2}) / d_i``, carrying (x_{i+1}, x_{i+2})."""
    (x1, x2), (d, u1, u2, b) = carry, row
    x = (b - u1[..., None] * x1 - u2[..., None] * x2) / d[..., None]
    return (x, x1), x


def _rows_first(dl: Any, d: Any, du: Any, b: Any) -> tuple[Any, Any, Any, Any]:
    """The row axis moved first for the scans; ``du[m-1]``, outside the matrix, zeroed."""
    dl, d, du = (moveaxis(v, -1, 0) for v in (dl, d, du))
    return dl, d, concatenate([du[:-1], _zeros_like(du[-1:])], 0), moveaxis(b, -2, 0)


def _gtsv(dl: Any, d: Any, du: Any, b: Any) -> Any:
    """The solutions of the batched systems by gtsv's algorithm; NaN for a singular matrix."""
    if d.shape[-1] == 0:
        return b
    dl, d, du, b = _rows_first(dl, d, du, b)
    swaps, facts, upper = _factor(_eliminate, dl, d, du, (d[0], du[0]))
    zero = _zeros_like(b[0])
    _, x = scan(_back_substitute, (zero, zero), (*upper, _forward(swaps, facts, b)), reverse=True)
    singular = reduce_or(upper[0] == 0, (0,))[..., None, None]
    return where(singular, np.array(np.nan, b.dtype), moveaxis(x, 0, -2))


# --- perturb_singular ------------------------------------------------------------------------------------


def _safe_range(dtype: Any) -> tuple[Any, Any]:
    """LAPACK's safe minimum (xLAMCH('S')) of the real dtype, and its reciprocal."""
    info = np.finfo(dtype)
    one = np.ones([], info.dtype)
    small = one / info.max
    safemin = info.tiny if small < info.tiny else small * (one + info.eps)
    return safemin, one / safemin


def _perturb_pivot(pivot: Any, row: Any, perturb: Any) -> tuple[Any, Any]:
    """jaxlib's MaybePerturbPivot (after lagts) for the pivot of each batch element and its
    right-hand-side row: while ``|pivot| < 1`` and ``row / pivot`` could overflow, add the
    perturbation (with the pivot's sign), doubling it each time; a pivot below the safe
    minimum that a small row allows is scaled up instead, row with it. Returns the pivot and
    whether the row is scaled (by the reciprocal of the safe minimum)."""
    safemin, bignum = _safe_range(perturb.dtype)
    factor = reduce_max(ew.abs(row), (row.ndim - 1,))
    step = _with_sign_of(ew.max(perturb, full_like(perturb, safemin)), _real(pivot))

    def unfinished(state: tuple[Any, Any, Any, Any]) -> Any:
        return reduce_or(state[3], range(state[3].ndim))

    def adjust(state: tuple[Any, Any, Any, Any]) -> tuple[Any, Any, Any, Any]:
        pivot, step, scaled, active = state
        size = ew.abs(pivot)
        tiny = size < safemin
        add = active & where(tiny, (size == 0) | (factor * safemin > size), factor > size * bignum)
        scale = active & tiny & ~add
        pivot = where(add, pivot + step.astype(pivot.dtype), where(scale, pivot * bignum, pivot))
        return pivot, where(add, step * 2, step), scaled | scale, add & (ew.abs(pivot) < 1)

    state = (pivot, step, _zeros_like(factor) != 0, ew.abs(pivot) < 1)
    pivot, _, scaled, _ = while_loop(unfinished, adjust, state)
    return pivot, scaled


def _scaled_row(row: Any, scaled: Any) -> Any:

    _, bignum = _safe_range(row.dtype)
    return where(scaled[..., None], row * np.array(bignum, row.dtype), row)


def _residual(carry: tuple[Any, Any], u1: Any, u2: Any, b: Any) -> Any:
    x1, x2 = carry
    return b - u1[..., None] * x1 - u2[..., None] * x2


def _solve_row(row: Any, pivot: Any, single: bool) -> Any:
    """``row / pivot`` as the kernel computes it: a division for a 1x1 matrix, else a product
    with the reciprocal."""
    one = np.array(1, pivot.dtype)
    return row / pivot[..., None] if single else row * (one / pivot)[..., None]


def _lagts(upper: tuple[Any, Any, Any], rhs: Any, pivots: Any) -> tuple[Any, Any, Any]:
    """Back substitution with the pivots perturbed: the solutions (rows first), the pivots used
    and whether each row was scaled. ``pivots`` is the perturbation ``eps * max|U|`` (each pivot
    found as the kernel does), or the (pivots, scalings) found before: then linear in ``rhs``."""
    single, fixed = rhs.shape[0] == 1, isinstance(pivots, tuple)

    def step(carry: tuple[Any, Any], row: tuple[Any, ...]) -> tuple[tuple[Any, Any], Any]:
        d, u1, u2, b, *given = row
        r = _residual(carry, u1, u2, b)
        pivot, scaled = given if fixed else _perturb_pivot(d, r, pivots)
        x = _solve_row(_scaled_row(r, scaled), pivot, single)
        return (x, carry[0]), (x, pivot, scaled)

    zero = _zeros_like(rhs[0])
    return scan(step, (zero, zero), (*upper, rhs, *(pivots if fixed else ())), reverse=True)[1]


def _perturbed(dl: Any, d: Any, du: Any, b: Any) -> tuple[Any, tuple[Any, ...]]:
    """The solutions by the perturbed kernel's algorithm, and what solves another right-hand
    side the same way (swaps, multipliers, U, pivots, scalings)."""
    if d.shape[-1] == 0 or b.shape[-1] == 0:
        return b, ()
    dl, d, du, b = _rows_first(dl, d, du, b)
    start = (d[0], du[0], ew.abs(d[0]) + ew.abs(du[0]))
    swaps, facts, upper = _factor(_eliminate_scaled, dl, d, du, start)
    # max|U| as the kernel gathers it: the first row before elimination, the rows of U but the last
    # two, and the last pivot.
    m = d.shape[0]
    gathered = [ew.abs(d[0]), ew.abs(du[0]), ew.abs(upper[0][-1])] if m > 1 else [ew.abs(d[0])]
    kept_rows = [ew.abs(u[: max(m - 2, 0)]) for u in upper]
    largest = reduce_max(concatenate(kept_rows + [g[None] for g in gathered], 0), (0,))
    perturb = np.finfo(largest.dtype).eps * largest
    rhs = _forward(swaps, facts, b)
    x, pivots, scaled = _lagts(upper, rhs, perturb)
    return moveaxis(x, 0, -2), (swaps, facts, upper, pivots, scaled)


def _tridiagonal_product(dl: Any, d: Any, du: Any, x: Any) -> Any:
    """T x for the tridiagonal T of (dl, d, du), in jax's order of sums."""
    widths = [(0, 0, 0)] * (x.ndim - 2)
    zero = np.zeros((), x.dtype)
    y = d[..., None] * x
    y = y + pad(dl[..., 1:, None] * x[..., :-1, :], zero, [*widths, (1, 0, 0), (0, 0, 0)])
    return y + pad(du[..., :-1, None] * x[..., 1:, :], zero, [*widths, (0, 1, 0), (0, 0, 0)])


@custom_jvp
def _solve(dl: Any, d: Any, du: Any, b: Any) -> Any:
    return _gtsv(dl, d, du, b)


@_solve.defjvp
def _solve_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    dl, d, du, b = primals
    dl_dot, d_dot, du_dot, b_dot = tangents
    x = _gtsv(dl, d, du, b)
    return x, _gtsv(dl, d, du, b_dot - _tridiagonal_product(dl_dot, d_dot, du_dot, x))


@custom_jvp
def _solve_perturbed(dl: Any, d: Any, du: Any, b: Any) -> Any:
    return _perturbed(dl, d, du, b)[0]


@_solve_perturbed.defjvp
def _solve_perturbed_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:

    dl, d, du, b = primals
    dl_dot, d_dot, du_dot, b_dot = tangents
    x, factors = _perturbed(dl, d, du, b)
    rhs = b_dot - _tridiagonal_product(dl_dot, d_dot, du_dot, x)
    if not factors:
        return x, rhs
    swaps, facts, upper, pivots, scaled = factors
    rhs = _forward(swaps, facts, moveaxis(rhs, -2, 0))
    return x, moveaxis(_lagts(upper, rhs, (pivots, scaled))[0], 0, -2)


def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any, *, perturb_singular: bool = False) -> Any:
    """X with ``T X = b`` for the tridiagonal matrices T whose sub-, main and superdiagonals are
    ``dl``, ``d``, ``du`` (..., m) (``dl[..., 0]`` and ``du[..., m-1]`` are ignored) and b
    (..., m, k); NaN for a singular T, unless ``perturb_singular``, which perturbs tiny pivots
    to keep the solution finite (for inverse iteration)."""
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
    return (_solve_perturbed if perturb_singular else _solve)(dl, d, du, b)
