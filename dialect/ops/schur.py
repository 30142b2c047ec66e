"""The Schur decomposition: schur, as jax's `lax.linalg.schur` primitive (LAPACK `?gees`).

Like the other decompositions (decompositions.py) it works on the last two dimensions and treats
the leading ones as a batch; the operand is f32, f64, complex64 or complex128 and the results
have its type: the Schur form T and, if asked for, the Schur vectors Z (A = Z T Z^H). The
reference calls SciPy's `?gees` with the optimal workspace (what jaxlib's kernel and LAPACKE
ask for: gees' Hessenberg reduction is blocked only with room for it), without sorting, so the
interpreter, the native CPU backend and XLA give the same T and Z.
"""

from __future__ import annotations

import numpy as np

from mlax.dialect.ops.decompositions import check_matrix, lapack_routine, nans_like, per_matrix
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec


def _infer_schur(x: TensorSpec, *, compute_schur_vectors: bool) -> tuple[TensorSpec, ...]:
    check_matrix("schur", x)
    return (x, x) if compute_schur_vectors else (x,)


def _schur(x: np.ndarray, *, compute_schur_vectors: bool) -> tuple[np.ndarray, ...]:
    gees = lapack_routine("gees", x.dtype)

    def one(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if a.size == 0:
            return a.copy(), a.copy()
        lwork = int(gees(lambda *_: None, a, lwork=-1)[-2][0].real)
        *outs, info = gees(lambda *_: None, a, compute_v=1, sort_t=0, lwork=max(lwork, 1))
        t, vs = outs[0], outs[-2]
        if info != 0:
            return nans_like(t), nans_like(vs)
        return t, vs

    t, vs = per_matrix(x, 2, one)
    return (t, vs) if compute_schur_vectors else (t,)


define_op(
    "schur", "(operand: T) -> (schur_form: T, *schur_vectors: T)",
    complex=True, sharding="fallback",
    attributes={"compute_schur_vectors": "bool"},
    infer=_infer_schur, reference=_schur, weak_type="never",
    summary="The Schur form T and Schur vectors Z (A = Z T Z^H) of square matrices (LAPACK `?gees`).",
    description="""
`operand`: f32, f64, complex64 or complex128, `(..., n, n)`. Results of the operand's type and
shape: the Schur form T, upper triangular for a complex matrix and quasi upper triangular (2x2
diagonal blocks for conjugate pairs of eigenvalues, LAPACK's standard form) for a real one,
then, if `compute_schur_vectors`, the unitary (orthogonal) Z. Eigenvalues are in LAPACK's order:
jax's `sort_eig_vals` is refused by its CPU lowering, so the op has no sorting. A matrix whose
QR iteration fails (`info != 0`) gives NaNs in its results, as jax returns.
""",
)

