"""JVP rules of the matrix decompositions: jax's rules (jax/_src/lax/linalg.py), batched.

- cholesky (Murray 2016, arXiv:1602.07527, jax's `_cholesky_jvp_rule`): with L the factor,
  L' = L phi(L^-1 A' L^-H), phi taking the lower triangle with the diagonal halved. The two
  solves are triangular_solves of the tangent, so the rule is linear in it and transposes.
  As jax, the whole tangent is used (the front end symmetrizes the operand, so its tangent is
  symmetric); a failed factor (NaN) gives NaN tangents.
- triangular_solve: linear in b (the same solve of b's tangent); in a, jax's
  `_triangular_solve_jvp_rule_a`: the tangent of a restricted to the triangle read (without
  the diagonal when unit_diagonal), negated, transposed and conjugated as op(A), multiplied by
  the answer and solved, in the cheaper order for the shapes.
- lu (de Hoog, Anderssen and Lukas; jax's `_lu_jvp_rule`): with P A = L U, X = L^-1 P A' U^-1
  gives L' = L tril(X, -1) and U' = triu(X) U, and the tangent of the packed result is their
  sum; pivots and permutation are integers (no tangent). Rectangular matrices pad L and U to
  square as jax does.

Every op that consumes a tangent here is linear in it with a transpose rule (dot_general
with one tangent operand, triangular_solve in b, select with a primal predicate, mul by a
primal, neg, transpose, slice, pad, apply_permutation), so reverse mode follows.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mlir import ir

from mlax.dialect import dtypes, read_attributes
from mlax.passes.autodiff.emit import Emitter, MaybeValue, spec

JvpRule = Callable[[Emitter, ir.Operation, list[ir.Value], list[MaybeValue], list[ir.Value]],
                   list[MaybeValue]]


def matmul(e: Emitter, x: ir.Value, y: ir.Value) -> ir.Value:
    """Batched ``x @ y`` over the leading dimensions (both operands have them)."""
    rank = spec(x).ndim
    batch = tuple(range(rank - 2))
    return e("dot_general", x, y, lhs_contracting_dimensions=(rank - 1,),
             rhs_contracting_dimensions=(rank - 2,), lhs_batch_dimensions=batch, rhs_batch_dimensions=batch,
             result_dtype=spec(x).dtype)


def transpose_last(e: Emitter, x: ir.Value) -> ir.Value:
    """``x`` with its last two dimensions swapped."""
    rank = spec(x).ndim
    return e("transpose", x, permutation=(*range(rank - 2), rank - 1, rank - 2))


def adjoint(e: Emitter, x: ir.Value) -> ir.Value:
    """``x``'s conjugate transpose (its transpose when real): jax's `_H`."""
    swapped = transpose_last(e, x)
    return e("conj", swapped) if dtypes.is_complex(spec(x).dtype) else swapped


def triangle(e: Emitter, x: ir.Value, k: int, lower: bool) -> ir.Value:
    """jnp.tril(x, k) (``lower``) or jnp.triu(x, k) of each matrix: the rest zeroed by a select
    on a mask made of iotas (linear in ``x``)."""
    shape = spec(x).shape
    i32 = np.dtype(np.int32)
    rows = e("iota", shape=shape, dtype=i32, dimension=len(shape) - 2)
    cols = e("iota", shape=shape, dtype=i32, dimension=len(shape) - 1)
    shifted = e("add", rows, e.full(rows, k)) if k else rows
    mask = e("compare", cols, shifted, comparison_direction="LE" if lower else "GE")
    return e("select", mask, x, e.zeros(x))


def eye(e: Emitter, like: ir.Value | ir.Type, offset: int = 0) -> ir.Value:
    """Ones where column == row + offset on every matrix of ``like``'s type, zeros elsewhere."""
    s = spec(like)
    i32 = np.dtype(np.int32)
    rows = e("iota", shape=s.shape, dtype=i32, dimension=len(s.shape) - 2)
    cols = e("iota", shape=s.shape, dtype=i32, dimension=len(s.shape) - 1)
    shifted = e("add", rows, e.full(rows, offset)) if offset else rows
    hit = e("compare", cols, shifted, comparison_direction="EQ")
    return e("convert", hit, new_dtype=s.dtype)


def solve(e: Emitter, a: ir.Value, b: ir.Value, **flags: bool) -> ir.Value:
    """triangular_solve with jax's defaults for the flags not given."""
    defaults = dict(left_side=False, lower=False, transpose_a=False, conjugate_a=False, unit_diagonal=False)
    return e("triangular_solve", a, b, **(defaults | flags))


def _cholesky(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
              outs: list[ir.Value]) -> list[MaybeValue]:
    (sigma_dot,), (factor,) = tangents, outs
    if sigma_dot is None:
        return [None]
    tmp = solve(e, factor, sigma_dot, left_side=False, transpose_a=True, conjugate_a=True, lower=True)
    inner = solve(e, factor, tmp, left_side=True, lower=True)
    halve_diagonal = e("sub", e.full(factor, 1.0), e("mul", eye(e, factor), e.full(factor, 0.5)))
    phi = e("mul", triangle(e, inner, 0, lower=True), halve_diagonal)
    return [matmul(e, factor, phi)]


def _triangular_solve(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
                      outs: list[ir.Value]) -> list[MaybeValue]:
    (a, _), (ta, tb), (ans,) = primals, tangents, outs
    flags = read_attributes(op)
    out = None if tb is None else e("triangular_solve", a, tb, **flags)
    if ta is None:
        return [out]
    k = 1 if flags["unit_diagonal"] else 0
    g_a = e("neg", triangle(e, ta, -k, lower=True) if flags["lower"] else triangle(e, ta, k, lower=False))
    if flags["transpose_a"]:
        g_a = transpose_last(e, g_a)
    if flags["conjugate_a"] and dtypes.is_complex(spec(g_a).dtype):
        g_a = e("conj", g_a)
    m, n = spec(ans).shape[-2:]
    if flags["left_side"]:
        term = (e("triangular_solve", a, matmul(e, g_a, ans), **flags) if m > n
                else matmul(e, e("triangular_solve", a, g_a, **flags), ans))
    else:
        term = (e("triangular_solve", a, matmul(e, ans, g_a), **flags) if m < n
                else matmul(e, ans, e("triangular_solve", a, g_a, **flags)))
    return [e.add(out, term)]


def _pad_last_two(e: Emitter, x: ir.Value, rows: int, cols: int) -> ir.Value:
    """``x`` with ``rows`` zero rows and ``cols`` zero columns appended to each matrix."""
    if not rows and not cols:
        return x
    rank = spec(x).ndim
    zero = e("constant", value=np.zeros((), spec(x).dtype))
    high = (0,) * (rank - 2) + (rows, cols)
    return e("pad", x, zero, edge_padding_low=(0,) * rank, edge_padding_high=high,
             interior_padding=(0,) * rank)


def _take(e: Emitter, x: ir.Value, rows: int, cols: int) -> ir.Value:
    """The leading ``rows`` x ``cols`` block of each matrix of ``x``."""
    shape = spec(x).shape
    if shape[-2:] == (rows, cols):
        return x
    return e("slice", x, start_indices=(0,) * len(shape), limit_indices=(*shape[:-2], rows, cols),
             strides=(1,) * len(shape))


def _lu(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
        outs: list[ir.Value]) -> list[MaybeValue]:
    (a_dot,), (packed, _, permutation) = tangents, outs
    if a_dot is None:
        return [None, None, None]
    *batch, m, n = spec(packed).shape
    k = min(m, n)
    lower = _pad_last_two(e, triangle(e, _take(e, packed, m, k), -1, lower=True), 0, m - k)
    lower = e("add", lower, eye(e, lower))
    upper = _pad_last_two(e, triangle(e, _take(e, packed, k, n), 0, lower=False), n - k, 0)
    if n > k:  # ones on the diagonal of the padded rows, as jax's u_eye
        corner = eye(e, upper)
        rows = e("iota", shape=spec(upper).shape, dtype=np.dtype(np.int32), dimension=len(batch))
        keep = e("compare", rows, e.full(rows, k), comparison_direction="GE")
        upper = e("add", upper, e("select", keep, corner, e.zeros(corner)))
    indices = e("broadcast_in_dim", permutation, shape=(*batch, m, n),
                broadcast_dimensions=tuple(range(len(batch) + 1)))
    permuted = e("apply_permutation", a_dot, indices, dimension=len(batch))
    la = solve(e, lower, permuted, left_side=True, lower=True, unit_diagonal=True)
    lau = solve(e, upper, la, left_side=False, lower=False)
    l_dot = matmul(e, lower, triangle(e, lau, -1, lower=True))
    u_dot = matmul(e, triangle(e, lau, 0, lower=False), upper)
    return [e("add", l_dot, u_dot), None, None]


DECOMPOSITION_JVP_RULES: dict[str, JvpRule] = {
    "cholesky": _cholesky,
    "triangular_solve": _triangular_solve,
    "lu": _lu,
}
