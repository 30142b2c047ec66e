"""JVP rule of eig: jax's `eig_jvp_rule` (jax/_src/lax/linalg.py), batched.

Nondegenerate perturbation theory (Giles 2008, sec. 3.1): with A V = V diag(w) and
P = V^-1 dA V, the eigenvalues move by dw = diag(P). Eigenvalues alone (no vectors asked for)
take the same diagonal; the rule computes V with a second eig, as jax does. The eigenvectors'
tangent, only under jax's opt-in `enable_eigvec_derivs` (it is valid only for distinct
eigenvalues and no tie for an eigenvector's largest component), is U + V diag(c) with
U = V (F * P), F_ij = 1 / (w_j - w_i) off the diagonal, and c fixing LAPACK's normalisation
(unit 2-norm, largest-magnitude component real): c_j = -Re(v_j^H u_j) - i Im(u_kj) / v_kj,
k = argmax_i |v_ij|. Left eigenvectors are the right ones of A^H: the same rule on conj(w),
V_l and dA^H. Without the opt-in a derivative of eigenvectors is refused with jax's message.

V^-1 dA is solved through an LU of the primal V (lu, the permutation applied to dA's rows, two
triangular solves), linear in dA; every other op consuming a tangent (dot_general, mul by a
primal, reduce_sum, real/imag/complex, convert, div by a primal) transposes, so reverse mode
follows. A real operand's tangent is converted to the complex type first.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from mlax.dialect import read_attributes
from mlax.passes.autodiff.emit import Emitter, MaybeValue, spec
from mlax.passes.autodiff.jvp_rules_decompositions import JvpRule, matmul, solve, transpose_last
from mlax.passes.autodiff.jvp_rules_spectral import _along, _diagonal, _reciprocal_gaps
from mlax.passes.registry import PassFailure

EIGVEC_DERIVS_MESSAGE = (
    "Derivatives of non-symmetric eigenvectors are only valid under assumptions on the input that mlax "
    "cannot check (see the enable_eigvec_derivs argument to mlax.lax.linalg.eig). Pass "
    "enable_eigvec_derivs=True to mlax.lax.linalg.eig to opt in. See "
    "https://github.com/jax-ml/jax/issues/2748 for discussion.")


def solve_general(e: Emitter, a: ir.Value, b: ir.Value) -> ir.Value:
    """x with a x = b for a primal ``a`` (..., n, n), linear in ``b`` (..., n, k): P a = L U, so
    x = U^-1 L^-1 (P b)."""
    packed, _, permutation = e.many("lu", a)
    batch = spec(b).ndim - 2
    rows = e("broadcast_in_dim", permutation, shape=spec(b).shape,
             broadcast_dimensions=tuple(range(batch + 1)))
    permuted = e("apply_permutation", b, rows, dimension=batch)
    y = solve(e, packed, permuted, left_side=True, lower=True, unit_diagonal=True)
    return solve(e, packed, y, left_side=True, lower=False)


def _vectors_jvp(e: Emitter, w: ir.Value, v: ir.Value, da: ir.Value) -> tuple[ir.Value, ir.Value]:
    """jax's `_eig_vec_jvp`: the tangents of the eigenvalues ``w`` and eigenvectors ``v``."""
    shape = spec(v).shape
    gaps = e("sub", _along(e, w, shape, -1), _along(e, w, shape, -2))  # w_j - w_i
    p = matmul(e, solve_general(e, v, da), v)
    u = matmul(e, v, e("mul", _reciprocal_gaps(e, gaps), p))
    rows = len(shape) - 2
    largest = e("argmax", e("abs", v), axis=rows, index_dtype=np.dtype(np.int32))
    row_index = e("iota", shape=shape, dtype=np.dtype(np.int32), dimension=rows)
    hit = e("compare", row_index, _along(e, largest, shape, -1), comparison_direction="EQ")
    mask = e("convert", hit, new_dtype=spec(v).dtype)

    def column_sum(x: ir.Value) -> ir.Value:
        return e("reduce_sum", x, dimensions=(rows,))

    c_real = e("neg", e("real", column_sum(e("mul", e("conj", v), u))))
    pivot_u, pivot_v = column_sum(e("mul", mask, u)), column_sum(e("mul", mask, v))
    c_imag = e("neg", e("div", e("imag", pivot_u), e("real", pivot_v)))
    c = e("complex", c_real, c_imag)
    return _diagonal(e, p), e("add", u, e("mul", v, _along(e, c, shape, -1)))


def _eig(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
         outs: list[ir.Value]) -> list[MaybeValue]:
    (a,), (da,) = primals, tangents
    if da is None:
        return [None] * len(outs)
    flags = read_attributes(op)
    left, right = flags["compute_left_eigenvectors"], flags["compute_right_eigenvectors"]
    if (left or right) and not flags["enable_eigvec_derivs"]:
        raise PassFailure(f"mlax-autodiff: {EIGVEC_DERIVS_MESSAGE}", op.location, kind=NotImplementedError)
    w = outs[0]
    vr = outs[-1] if right else e.many("eig", a, **(flags | {"compute_left_eigenvectors": False,
                                                             "compute_right_eigenvectors": True}))[-1]
    complex_type = spec(w).dtype
    if spec(da).dtype != complex_type:
        da = e("convert", da, new_dtype=complex_type)
    if not (left or right):
        solved = solve_general(e, vr, da)
        return [e("reduce_sum", e("mul", solved, transpose_last(e, vr)), dimensions=(spec(vr).ndim - 1,))]
    dw, dvr = _vectors_jvp(e, w, vr, da)
    result = [dw]
    if left:
        result.append(_vectors_jvp(e, e("conj", w), outs[1], e("conj", transpose_last(e, da)))[1])
    if right:
        result.append(dvr)
    return result


EIG_JVP_RULES: dict[str, JvpRule] = {"eig": _eig}
