"""The orthogonal and spectral decompositions: qr, eigh and svd, as jax's `lax.linalg` primitives.

Like cholesky and lu (decompositions.py) each works on the last two dimensions and treats the
leading ones as a batch; element types f32, f64, complex64 and complex128 (eigenvalues and
singular values are real: f32 or f64). The references call the LAPACK routines jax's CPU
lowering calls, through SciPy, one matrix at a time: qr is jax's `_qr_lowering` (`?geqrf`, or
`?geqp3` with column pivoting (the geqp3 op's reference: LAPACKE of SciPy's OpenBLAS), then
`?orgqr` (`?ungqr` for complex) on the reflectors, padded to square for full tall matrices, cut
to the leading square for wide ones, and R the upper triangle), eigh is `?syevd`
(`?heevd`) and svd `?gesdd` (jobz A, S or N for full, reduced or no vectors). A routine that
fails (`info != 0`) leaves its matrix's results NaN, as jax's lowering does.
"""

from __future__ import annotations

import numpy as np

from mlax.dialect.dtypes import real_dtype
from mlax.dialect.ops.decompositions import check_matrix, lapack_routine, nans_unless, per_matrix
from mlax.dialect.ops.householder import geqp3_values, geqrf_values, householder_product_values
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec

# --- qr ------------------------------------------------------------------------------------------


def qr_shapes(m: int, n: int, full_matrices: bool) -> tuple[tuple[int, int], tuple[int, int]]:
    """The shapes of Q and R of an m x n matrix (jax's `_qr_shape_rule`)."""
    k = m if full_matrices else min(m, n)
    return (m, k), (k, n)


def _infer_qr(x: TensorSpec, *, full_matrices: bool, pivoting: bool) -> tuple[TensorSpec, ...]:
    check_matrix("qr", x, square=False)
    *batch, m, n = x.shape
    q, r = qr_shapes(m, n, full_matrices)
    factors = TensorSpec((*batch, *q), x.dtype), TensorSpec((*batch, *r), x.dtype)
    return (*factors, TensorSpec((*batch, n), np.dtype(np.int32))) if pivoting else factors


def _qr(x: np.ndarray, *, full_matrices: bool, pivoting: bool) -> tuple[np.ndarray, ...]:
    """jax's `_qr_lowering`: geqrf (geqp3 from free pivots, made 0-based, when ``pivoting``), then
    householder_product on the reflectors (zero-padded to m x m for full tall matrices, the leading
    m x m block of a wide one), R the upper triangle."""
    *batch, m, n = x.shape
    (q_rows, q_cols), (r_rows, _) = qr_shapes(m, n, full_matrices)
    pivots = (np.zeros((*batch, n), np.int32),) if pivoting else ()
    if 0 in (m, n):
        q = np.broadcast_to(np.eye(q_rows, q_cols, dtype=x.dtype), (*batch, q_rows, q_cols)).copy()
        return q, np.zeros((*batch, r_rows, n), x.dtype), *pivots
    if pivoting:
        packed, one_based, taus = geqp3_values(x, *pivots)
        pivots = (one_based - 1,)
    else:
        packed, taus = geqrf_values(x)
    reflectors = packed[..., :, :m] if m < n else np.pad(packed, [(0, 0)] * (x.ndim - 1) + [(0, q_cols - n)])
    return householder_product_values(reflectors, taus), np.triu(packed[..., :r_rows, :]), *pivots


define_op(
    "qr", "(operand: T) -> (q: U, r: V, *p: W)",
    complex=True, sharding="fallback",
    attributes={"full_matrices": "bool", "pivoting": "bool"},
    infer=_infer_qr, reference=_qr, weak_type="never",
    summary="QR decomposition A = Q R, or A[:, P] = Q R with column pivoting (LAPACK `?geqrf` or `?geqp3`, "
            "then `?orgqr`, as jax's CPU lowering).",
    description="""
`operand`: f32, f64, complex64 or complex128, `(..., m, n)`. With k = m when `full_matrices`
else min(m, n), `q` is `(..., m, k)` with orthonormal (unitary) columns and `r` `(..., k, n)`
upper triangular (zeros below the diagonal). The Householder reflectors of `?geqrf` are
expanded by `?orgqr` exactly as jax's `_qr_lowering` does, so the signs are LAPACK's (R's
diagonal may be negative). With `pivoting` the factorization is `?geqp3`'s, from free pivots
(R's diagonal non-increasing in magnitude), and a third result `p`, int32 `(..., n)`, holds the
0-based column permutation: A[..., :, p] = Q R (jax's `qr_p` with `pivoting=True`). An empty
matrix gives the identity's leading columns, a zero R and zero pivots, as jax.
""",
)


# --- eigh ----------------------------------------------------------------------------------------


def _infer_eigh(x: TensorSpec, *, lower: bool, sort_eigenvalues: bool) -> tuple[TensorSpec, TensorSpec]:
    check_matrix("eigh", x)
    return x, TensorSpec(x.shape[:-1], real_dtype(x.dtype))


def _eigh(x: np.ndarray, *, lower: bool, sort_eigenvalues: bool) -> tuple[np.ndarray, np.ndarray]:
    syevd = lapack_routine("heevd" if np.iscomplexobj(x) else "syevd", x.dtype)

    def one(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if a.size == 0:
            return a.copy(), np.zeros(0, real_dtype(a.dtype))
        w, v, info = syevd(a, compute_v=1, lower=int(lower))
        return nans_unless(info == 0, v, w)

    return per_matrix(x, 2, one)


define_op(
    "eigh", "(operand: T) -> (v: T, w: U)",
    complex=True, sharding="fallback",
    attributes={"lower": "bool", "sort_eigenvalues": "bool"},
    infer=_infer_eigh, reference=_eigh, weak_type="never",
    summary="Eigenvectors and eigenvalues of symmetric matrices (LAPACK `?syevd`).",
    description="""
`operand`: f32, f64, complex64 or complex128, `(..., n, n)`, symmetric (Hermitian); only its
`lower` (else upper) triangle is read (the front end symmetrizes first, as
`jax.lax.linalg.eigh`). `v` has its type, the normalized eigenvector of eigenvalue `w[..., i]`
in column `v[..., :, i]`; `w` is `(..., n)`, real (f32 or f64), ascending (LAPACK always
sorts, so `sort_eigenvalues` changes nothing on CPU, as in jax). NaN where `?syevd` fails.
""",
)


# --- svd -----------------------------------------------------------------------------------------


def svd_shapes(m: int, n: int, full_matrices: bool, compute_uv: bool) -> tuple[tuple[int, ...], ...]:
    """The shapes of s, u and vh of an m x n matrix; u and vh are empty (0 x 0) without vectors."""
    k = min(m, n)
    if not compute_uv:
        return (k,), (0, 0), (0, 0)
    return (k,), (m, m if full_matrices else k), (n if full_matrices else k, n)


def _infer_svd(x: TensorSpec, *, full_matrices: bool, compute_uv: bool) -> tuple[TensorSpec, ...]:
    check_matrix("svd", x, square=False)
    *batch, m, n = x.shape
    (s, *vectors) = svd_shapes(m, n, full_matrices, compute_uv)
    return (TensorSpec((*batch, *s), real_dtype(x.dtype)),
            *(TensorSpec((*batch, *shape), x.dtype) for shape in vectors))


def _empty_svd(m: int, n: int, dtype: np.dtype, full_matrices: bool,
               compute_uv: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """jax's `_empty_svd` for a matrix with no elements."""
    shapes = svd_shapes(m, n, full_matrices, compute_uv)
    dtypes = (real_dtype(dtype), dtype, dtype)
    s, u, vh = (np.zeros(shape, d) for shape, d in zip(shapes, dtypes, strict=True))
    if compute_uv and full_matrices:
        u, vh = np.eye(m, dtype=dtype), np.eye(n, dtype=dtype)
    return s, u, vh


def _svd(x: np.ndarray, *, full_matrices: bool, compute_uv: bool) -> tuple[np.ndarray, ...]:
    gesdd = lapack_routine("gesdd", x.dtype)
    m, n = x.shape[-2:]
    if 0 in (m, n):
        return per_matrix(x, 3, lambda a: _empty_svd(m, n, a.dtype, full_matrices, compute_uv))

    def one(a: np.ndarray) -> tuple[np.ndarray, ...]:
        # As the CPU backend: ?gesdd may never return on an infinity, so it gets zeros instead
        # and the results are NaN.
        finite = np.isfinite(a).all()
        u, s, vh, info = gesdd(a if finite else np.zeros_like(a), compute_uv=int(compute_uv),
                               full_matrices=int(full_matrices))
        info = info if finite else -4
        if not compute_uv:
            u, vh = np.zeros((0, 0), a.dtype), np.zeros((0, 0), a.dtype)
        return nans_unless(info == 0, s, u, vh)

    return per_matrix(x, 3, one)


define_op(
    "svd", "(operand: T) -> (s: U, u: V, vh: W)",
    complex=True, sharding="fallback",
    attributes={"full_matrices": "bool", "compute_uv": "bool"},
    infer=_infer_svd, reference=_svd, weak_type="never",
    summary="Singular value decomposition A = U diag(s) Vh (LAPACK `?gesdd`, as jax on CPU).",
    description="""
`operand`: f32, f64, complex64 or complex128, `(..., m, n)`, k = min(m, n). `s`: `(..., k)`,
real (f32 or f64), descending, non-negative.
With `compute_uv`, `u` is `(..., m, m)` when `full_matrices` else `(..., m, k)`, and `vh`
`(..., n, n)` or `(..., k, n)`; without, both are empty `(..., 0, 0)` (jobz N: no vectors
computed; the front end returns `s` alone, as jax). The results order is jax's `svd_p`'s. NaN
where `?gesdd` fails; an empty matrix gives jax's `_empty_svd` (identities for full vectors).
""",
)

