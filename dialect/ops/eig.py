"""The general eigendecomposition: eig, as jax's `lax.linalg.eig` primitive (LAPACK `?geev`).

Like the other decompositions (decompositions.py) it works on the last two dimensions and treats
the leading ones as a batch; the operand is f32, f64, complex64 or complex128. The results are
complex even for a real matrix: the eigenvalues, then the left
eigenvectors and the right ones, each only if asked for (so the op has 1 to 3 results). The
reference calls SciPy's `?geev`, the routine jax's CPU lowering calls, and unpacks its real
storage of conjugate pairs (`unpack_eigenvectors`) as jaxlib does (`?geev` on complex matrices
gives complex results directly), so the interpreter, the native
CPU backend and XLA return the same eigenvalues in the same order.
"""

from __future__ import annotations

import numpy as np

from mlax.dialect import dtypes
from mlax.dialect.ops.decompositions import check_matrix, lapack_routine, nans_like, per_matrix
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec


def _complex_type(dtype: np.dtype) -> np.dtype:
    return dtype if dtypes.is_complex(dtype) else dtypes.complex_dtype(dtype)


def _infer_eig(x: TensorSpec, *, compute_left_eigenvectors: bool, compute_right_eigenvectors: bool,
               enable_eigvec_derivs: bool) -> tuple[TensorSpec, ...]:
    check_matrix("eig", x)
    complex_type = _complex_type(x.dtype)
    vectors = TensorSpec(x.shape, complex_type)
    count = int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
    return (TensorSpec(x.shape[:-1], complex_type), *(vectors,) * count)


def unpack_eigenvectors(wi: np.ndarray, packed: np.ndarray) -> np.ndarray:
    """``?geev``'s real eigenvectors as complex columns: a conjugate pair j, j+1 (wi[j] > 0) is
    stored as its real part in column j and its imaginary part in column j+1."""
    vectors = packed.astype(dtypes.complex_dtype(packed.dtype))
    for j in np.flatnonzero(wi > 0):
        vectors[:, j] = packed[:, j] + 1j * packed[:, j + 1]
        vectors[:, j + 1] = np.conj(vectors[:, j])
    return vectors


def _eig(x: np.ndarray, *, compute_left_eigenvectors: bool, compute_right_eigenvectors: bool,
         enable_eigvec_derivs: bool) -> tuple[np.ndarray, ...]:
    geev = lapack_routine("geev", x.dtype)
    complex_type = _complex_type(x.dtype)

    def one(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if a.size == 0:
            return np.zeros(0, complex_type), np.zeros((0, 0), complex_type), np.zeros((0, 0), complex_type)
        if not np.isfinite(a).all():  # as jaxlib: ?geev is not called on NaN or infinity
            return nans_like(np.zeros(a.shape[:1], complex_type)), *[nans_like(a.astype(complex_type))] * 2
        if dtypes.is_complex(a.dtype):
            w, vl, vr, info = geev(a, compute_vl=1, compute_vr=1)
        else:
            wr, wi, vl, vr, info = geev(a, compute_vl=1, compute_vr=1)
            w = (wr + 1j * wi).astype(complex_type)
            vl, vr = unpack_eigenvectors(wi, vl), unpack_eigenvectors(wi, vr)
        if info != 0:
            return nans_like(w), nans_like(vl), nans_like(vr)
        return w, vl, vr

    w, vl, vr = per_matrix(x, 3, one)
    return (w, *([vl] if compute_left_eigenvectors else []), *([vr] if compute_right_eigenvectors else []))


define_op(
    "eig", "(operand: T) -> (eigenvalues: U, *eigenvectors: V)",
    complex=True, sharding="fallback",
    attributes=dict.fromkeys(("compute_left_eigenvectors", "compute_right_eigenvectors",
                              "enable_eigvec_derivs"), "bool"),
    infer=_infer_eig, reference=_eig, weak_type="never",
    summary="Eigenvalues and left/right eigenvectors of general square matrices (LAPACK `?geev`).",
    description="""
`operand`: f32, f64, complex64 or complex128, `(..., n, n)`. Results, all of the complex type
of the operand's precision (complex64 for f32 and complex64): the eigenvalues `(..., n)` in
LAPACK's order (for a real matrix a conjugate pair adjacent, positive imaginary part first),
then the left eigenvectors `(..., n, n)` if `compute_left_eigenvectors` (u_j^H A = w_j u_j^H),
then the right ones if `compute_right_eigenvectors` (A v_j = w_j v_j); eigenvectors are the
columns, each of unit 2-norm with its largest component real (LAPACK's normalisation). A
matrix whose QR iteration fails (`info != 0`) gives NaNs in all its results, as jax returns.
`enable_eigvec_derivs` is jax's opt-in to derivatives of the eigenvectors (mlax-autodiff
refuses them without it).
""",
)

