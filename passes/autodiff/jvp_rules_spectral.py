"""JVP rules of qr, eigh and svd: jax's rules (jax/_src/lax/linalg.py), batched.

Written for real matrices below; on complex ones every transpose ^T is the conjugate transpose
^H (`adjoint`) and jax's complex corrections apply: qr adds i Im(diag C) to Ω, eigh's dw and
svd's ds are the real parts of the diagonals, and svd's dU gains jax's
½ (dS - dS^H) ∘ diag(1/s) (zero for real matrices, so not emitted for them).

- qr (jax's `qr_jvp_rule`, j-towns.github.io/papers/qr-derivative.pdf): for a tall or square
  Q R, with C = Q^T dX R^-1 and the skew-symmetric Ω = tril(C, -1) - tril(C, -1)^T,
  dQ = Q (Ω - C) + dX R^-1 and dR = (C - Ω) R. Wide matrices X = [X1 X2] differentiate the
  square X1 = Q R1 and dR2 = dQ^T X2 + Q^T dX2. Full tall matrices add the trailing columns
  of dQ by arXiv:2409.13374 (eqs. 32-33), with Z = Q_pn (Q_nn - I)^-1 solved through an LU of
  the primal, as jax.
  With column pivoting, X[:, P] = Q R: the same rule on the permuted columns of dX (and of X, in
  dR2), P getting no tangent. jax 0.10.2 takes the unpermuted X2 in dR2 (its pivoted wide dR
  disagrees with finite differences); this rule takes X[:, P]'s, which is Q R2.
- eigh (jax's `_eigh_jvp_rule`, nondegenerate perturbation theory: it assumes distinct
  eigenvalues, a repeated one gives inf/NaN): with Y = V^T dA V and F_ij = 1/(w_j - w_i) off
  the diagonal, 0 on it, dV = V (F * Y) and dw = diag(Y). jax re-runs eigh on the symmetrized
  operand; this rule uses the op's results, which are the same for the symmetric operands the
  front end passes (symmetrize_input=True).
- svd (jax's `_svd_jvp_rule`): with dS = U^T dA V, ds = diag(dS); F_ij = 1/(s_j^2 - s_i^2)
  off the diagonal, dU = U (F * (dS S + S dS^T)), dV = V (F * (S dS + dS^T S)), plus the
  components outside U's (m > n) or V's (n > m) span. Like jax it needs the reduced vectors
  (a second svd when the op has none or full square ones) and refuses full rectangular ones;
  repeated singular values give inf/NaN, zero ones are skipped as jax's `s_inv`.

Every op that consumes a tangent is linear in it with a transpose rule (dot_general with one
tangent operand, triangular_solve in b, mul by a primal, select, sub, transpose, slice, pad,
concatenate, reduce_sum, apply_permutation), so reverse mode follows.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from mlax.dialect import dtypes, read_attributes
from mlax.passes.autodiff.emit import Emitter, MaybeValue, spec
from mlax.passes.autodiff.jvp_rules_decompositions import (
    JvpRule,
    _pad_last_two,
    _take,
    adjoint,
    eye,
    matmul,
    solve,
    transpose_last,
    triangle,
)
from mlax.passes.registry import PassFailure


def _cut(e: Emitter, x: ir.Value, rows: tuple[int, int], cols: tuple[int, int]) -> ir.Value:
    """The block ``x[..., rows[0]:rows[1], cols[0]:cols[1]]``."""
    shape = spec(x).shape
    lead = len(shape) - 2
    return e("slice", x, start_indices=(0,) * lead + (rows[0], cols[0]),
             limit_indices=(*shape[:-2], rows[1], cols[1]), strides=(1,) * len(shape))


def _concat(e: Emitter, x: ir.Value, y: ir.Value, axis: int) -> ir.Value:
    return e("concatenate", x, y, dimension=spec(x).ndim + axis)


def _along(e: Emitter, v: ir.Value, shape: tuple[int, ...], axis: int) -> ir.Value:
    """A vector per matrix (``v`` of shape (..., k)) broadcast to ``shape`` along ``axis`` (-1: the
    value varies along the columns, -2: along the rows)."""
    lead = len(shape) - 2
    dims = (*range(lead), len(shape) + axis)
    return e("broadcast_in_dim", v, shape=shape, broadcast_dimensions=dims)


def _diagonal(e: Emitter, x: ir.Value) -> ir.Value:
    """The diagonal of each square matrix (linear in ``x``: masked, then summed)."""
    masked = e("mul", x, eye(e, x))
    return e("reduce_sum", masked, dimensions=(spec(x).ndim - 1,))


def _real_diagonal(e: Emitter, x: ir.Value) -> ir.Value:
    """The real part of each matrix's diagonal (the diagonal itself when real)."""
    diagonal = _diagonal(e, x)
    return e("real", diagonal) if dtypes.is_complex(spec(x).dtype) else diagonal


def _like(e: Emitter, x: ir.Value, other: ir.Value) -> ir.Value:
    """The real ``x`` in ``other``'s (possibly complex) dtype."""
    dtype = spec(other).dtype
    return x if spec(x).dtype == dtype else e("convert", x, new_dtype=dtype)


def _reciprocal_gaps(e: Emitter, gaps: ir.Value) -> ir.Value:
    """1 / gaps off the diagonal and 0 on it (jax's `1 / (gaps + I) - I`)."""
    identity = eye(e, gaps)
    return e("sub", e("div", e.full(gaps, 1.0), e("add", gaps, identity)), identity)


# --- qr ------------------------------------------------------------------------------------------


def _thin_qr(e: Emitter, q: ir.Value, r: ir.Value, dx: ir.Value) -> tuple[ir.Value, ir.Value]:
    """jax's `_thin_qr_jvp` for m >= n."""
    dx_rinv = solve(e, r, dx)
    c = matmul(e, adjoint(e, q), dx_rinv)
    below = triangle(e, c, -1, lower=True)
    omega = e("sub", below, adjoint(e, below))
    if dtypes.is_complex(spec(c).dtype):  # Ω += I ∘ (C - Re C): the diagonal's imaginary part
        imaginary = e("sub", c, _like(e, e("real", c), c))
        omega = e("add", omega, e("mul", eye(e, c), imaginary))
    dq = e("add", matmul(e, q, e("sub", omega, c)), dx_rinv)
    dr = matmul(e, e("sub", c, omega), r)
    return dq, dr


def _solve_adjoint(e: Emitter, a: ir.Value, b: ir.Value) -> ir.Value:
    """z with a^H z = b, through an LU of ``a`` (all primal), as jax's lu_solve(trans=2):
    U^H L^H P z = b, so z = P^T L^-H U^-H b."""
    packed, _, permutation = e.many("lu", a)
    adjoint_of = dict(left_side=True, transpose_a=True, conjugate_a=True)
    y = solve(e, packed, b, lower=False, **adjoint_of)
    y = solve(e, packed, y, lower=True, unit_diagonal=True, **adjoint_of)
    shape = spec(packed).shape
    columns = e("iota", shape=shape, dtype=np.dtype(np.int32), dimension=len(shape) - 1)
    rows = _along(e, permutation, shape, -2)
    onehot = e("convert", e("compare", columns, rows, comparison_direction="EQ"), new_dtype=spec(a).dtype)
    return matmul(e, transpose_last(e, onehot), y)


def _permute_columns(e: Emitter, x: ir.Value, permutation: ir.Value) -> ir.Value:
    """``x[..., :, permutation]`` (``permutation`` (..., n) per matrix): linear in ``x``."""
    shape = spec(x).shape
    lead = len(shape) - 2
    indices = e("broadcast_in_dim", permutation, shape=shape, broadcast_dimensions=(*range(lead), lead + 1))
    return e("apply_permutation", x, indices, dimension=lead + 1)


def _qr(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
        outs: list[ir.Value]) -> list[MaybeValue]:
    (x,), (dx,), (q, r, *pivots) = primals, tangents, outs
    no_tangents = [None] * len(pivots)  # the permutation is an integer: no tangent
    if dx is None:
        return [None, None, *no_tangents]
    if pivots:  # x[..., p] = Q R: the rule of the permuted columns
        x, dx = (_permute_columns(e, v, pivots[0]) for v in (x, dx))
    full = read_attributes(op)["full_matrices"]
    m, n = spec(x).shape[-2:]
    if m < n:
        dq, dr1 = _thin_qr(e, q, _cut(e, r, (0, m), (0, m)), _cut(e, dx, (0, m), (0, m)))
        dr2 = e("add", matmul(e, adjoint(e, dq), _cut(e, x, (0, m), (m, n))),
                matmul(e, adjoint(e, q), _cut(e, dx, (0, m), (m, n))))
        return [dq, _concat(e, dr1, dr2, -1), *no_tangents]
    q_mn = _take(e, q, m, n)
    dq_mn, dr_nn = _thin_qr(e, q_mn, _take(e, r, n, n), dx)
    if not full or m == n:
        return [dq_mn, dr_nn, *no_tangents]
    q_nn, q_pn = _cut(e, q_mn, (0, n), (0, n)), _cut(e, q_mn, (n, m), (0, n))
    q_mp = _cut(e, q, (0, m), (n, m))
    dq_nn, dq_pn = _cut(e, dq_mn, (0, n), (0, n)), _cut(e, dq_mn, (n, m), (0, n))
    z_h = _solve_adjoint(e, e("sub", q_nn, eye(e, q_nn)), adjoint(e, q_pn))  # Z_pn^H
    z = adjoint(e, z_h)
    left = e("add", q_mn, matmul(e, q_mp, z))
    inner = e("sub", dq_pn, matmul(e, z, dq_nn))
    dq_mp = e("sub", matmul(e, dq_mn, z_h), matmul(e, left, adjoint(e, inner)))
    return [_concat(e, dq_mn, dq_mp, -1), _pad_last_two(e, dr_nn, m - n, 0), *no_tangents]


# --- eigh ----------------------------------------------------------------------------------------


def _eigh(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
          outs: list[ir.Value]) -> list[MaybeValue]:
    (da,), (v, w) = tangents, outs
    if da is None:
        return [None, None]
    shape = spec(v).shape
    gaps = e("sub", _along(e, w, shape, -1), _along(e, w, shape, -2))  # w_j - w_i
    y = matmul(e, matmul(e, adjoint(e, v), da), v)
    dv = matmul(e, v, e("mul", _like(e, _reciprocal_gaps(e, gaps), y), y))
    return [dv, _real_diagonal(e, y)]


# --- svd -----------------------------------------------------------------------------------------


def _svd(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
         outs: list[ir.Value]) -> list[MaybeValue]:
    (a,), (da,) = primals, tangents
    if da is None:
        return [None, None, None]
    flags = read_attributes(op)
    m, n = spec(a).shape[-2:]
    if flags["compute_uv"] and flags["full_matrices"] and m != n:
        raise PassFailure("mlax-autodiff: Singular value decomposition JVP not implemented for full matrices",
                          op.location, kind=NotImplementedError)
    reduced = flags["compute_uv"] and (not flags["full_matrices"] or m == n)
    s, u, vt = outs if reduced else e.many("svd", a, full_matrices=False, compute_uv=True)
    v = adjoint(e, vt)
    ds_matrix = matmul(e, matmul(e, adjoint(e, u), da), v)
    ds = _real_diagonal(e, ds_matrix)
    if not flags["compute_uv"]:
        return [ds, None, None]
    square = spec(ds_matrix).shape
    s_col, s_row = _along(e, s, square, -1), _along(e, s, square, -2)  # s_j, s_i
    f = _like(e, _reciprocal_gaps(e, e("mul", e("add", s_col, s_row), e("sub", s_col, s_row))), ds_matrix)
    dss = e("mul", _like(e, s_col, ds_matrix), ds_matrix)
    sds = e("mul", _like(e, s_row, ds_matrix), ds_matrix)
    du_inner = e("mul", f, e("add", dss, adjoint(e, dss)))
    if dtypes.is_complex(spec(ds_matrix).dtype):
        du_inner = e("add", du_inner, _phase_gauge(e, s, ds_matrix))
    du = matmul(e, u, du_inner)
    dv = matmul(e, v, e("mul", f, e("add", sds, adjoint(e, sds))))

    def outside(basis: ir.Value, basis_h: ir.Value, image: ir.Value) -> ir.Value:
        """(image - basis basis^H image) / s_j: the part of the tangent outside the span."""
        rest = e("sub", image, matmul(e, basis, matmul(e, basis_h, image)))
        inverse = e("div", e.full(rest, 1.0), _like(e, _along(e, s, spec(rest).shape, -1), rest))
        return e("mul", rest, inverse)

    if m > n:
        du = e("add", du, outside(u, adjoint(e, u), matmul(e, da, v)))
    if n > m:
        dv = e("add", dv, outside(v, vt, matmul(e, adjoint(e, da), u)))
    return [ds, du, adjoint(e, dv)]


def _phase_gauge(e: Emitter, s: ir.Value, ds_matrix: ir.Value) -> ir.Value:
    """jax's ½ (dS - dS^H) ∘ diag(s_inv), s_inv = 1/s where s != 0 and 0 where s == 0: the
    imaginary diagonal of dS over s, which fixes the phase of U's columns as LAPACK's."""
    shape = spec(ds_matrix).shape
    s_row = _along(e, s, shape, -2)
    zero = e("compare", s_row, e.zeros(s_row), comparison_direction="EQ")
    safe = e("select", zero, e.full(s_row, 1.0), s_row)
    s_inv = e("select", zero, e.zeros(s_row), e("div", e.full(s_row, 1.0), safe))
    diagonal = e("mul", eye(e, s_inv), s_inv)
    half_skew = e("mul", e.full(ds_matrix, 0.5), e("sub", ds_matrix, adjoint(e, ds_matrix)))
    return e("mul", half_skew, _like(e, diagonal, ds_matrix))


SPECTRAL_JVP_RULES: dict[str, JvpRule] = {"qr": _qr, "eigh": _eigh, "svd": _svd}
