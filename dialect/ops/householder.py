"""Householder reductions: geqrf, geqp3, householder_product, ormqr, hessenberg and tridiagonal, as
jax's `lax.linalg` primitives of the same names (LAPACK `?geqrf`, `?geqp3`, `?orgqr`/`?ungqr`,
`?ormqr`/`?unmqr`, `?gehrd`, `?sytrd`/`?hetrd`).

They return LAPACK's packed forms: the reduced matrix in one triangle (and a band next to the
diagonal), the Householder vectors in the rest, and the reflectors' scalar factors `taus`;
householder_product expands such reflectors into the orthogonal (unitary) matrix they multiply to;
ormqr multiplies a matrix by it without forming it.
As the other decompositions they work on the last two dimensions and treat the leading ones as a
batch; element types f32, f64, complex64 and complex128. The reference calls SciPy's wrapper of the
routine jax's CPU lowering calls, one matrix at a time with the optimal workspace, so the
interpreter, the native CPU backend (LAPACKE of the same OpenBLAS) and XLA (jaxlib's
`lapack_?<routine>_ffi`) agree. A matrix whose routine reports `info != 0` (only invalid arguments
can) is NaN in every result, as jax's lowerings make it.
"""

from __future__ import annotations

import numpy as np

from mlax.dialect import dtypes
from mlax.dialect.ops.common import op_type_error, op_value_error
from mlax.dialect.ops.decompositions import (
    LAPACK_PREFIXES,
    check_matrix,
    lapack_routine,
    nans_unless,
    per_matrix,
)
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec


def _optimal_lwork(dtype: np.dtype, name: str, *args: int, **kwargs: int) -> int:
    """LAPACK's optimal workspace for ``name`` (SciPy's `?<name>_lwork` query). jaxlib queries it
    too; SciPy's default is the minimum, with which LAPACK takes its unblocked code for large
    matrices and rounds differently."""
    work, _ = lapack_routine(f"{name}_lwork", dtype)(*args, **kwargs)
    return max(1, int(np.real(work)))


# --- geqrf ---------------------------------------------------------------------------------------


def _infer_geqrf(x: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
    check_matrix("geqrf", x, square=False)
    return x, TensorSpec((*x.shape[:-2], min(x.shape[-2:])), x.dtype)


def geqrf_values(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    geqrf = lapack_routine("geqrf", x.dtype)

    def one(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if a.size == 0:
            return a.copy(), np.zeros(min(a.shape), a.dtype)
        packed, taus, _, info = geqrf(a, lwork=_optimal_lwork(a.dtype, "geqrf", *a.shape))
        return nans_unless(info == 0, packed, taus)

    return per_matrix(x, 2, one)


define_op(
    "geqrf", "(operand: T) -> (a: T, taus: U)",
    complex=True, sharding="fallback",
    infer=_infer_geqrf, reference=geqrf_values, weak_type="never",
    summary="Householder QR factorization in LAPACK's packed form (`?geqrf`).",
    description="""
`operand`: f32, f64, complex64 or complex128, `(..., m, n)`. Results of its type: `a`
`(..., m, n)` with R on and above the diagonal and the Householder vectors (unit leading entry
implied) below it, and `taus` `(..., min(m, n))`, the reflectors' scalar factors, so that
Q = H_1 ... H_k with H_i = I - tau_i v_i v_i^H (jax's `lax.linalg.geqrf`).
""",
)


# --- geqp3 ---------------------------------------------------------------------------------------


def _infer_geqp3(a: TensorSpec, jpvt: TensorSpec) -> tuple[TensorSpec, TensorSpec, TensorSpec]:
    check_matrix("geqp3", a, "a", square=False)
    if jpvt.dtype != np.dtype(np.int32):
        raise op_type_error("geqp3", f"jpvt must have element type int32 (LAPACK's), got {jpvt.dtype}")
    if jpvt.shape != (*a.shape[:-2], a.shape[-1]):
        raise op_value_error("geqp3", f"jpvt must have shape (..., n) with a's batch dimensions, got shapes "
                                      f"{a.shape} and {jpvt.shape}")
    return a, jpvt, TensorSpec((*a.shape[:-2], min(a.shape[-2:])), a.dtype)


def geqp3_values(a: np.ndarray, jpvt: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SciPy's `?geqp3` wrapper cannot take initial pivots (its jpvt is output only), so this calls
    LAPACKE's, of the OpenBLAS SciPy ships: the routine the CPU backend and jaxlib call."""
    import ctypes

    from mlax.backends.native.lapack import scipy_openblas

    routine = getattr(scipy_openblas(), f"scipy_LAPACKE_{LAPACK_PREFIXES[a.dtype]}geqp3")
    routine.restype = ctypes.c_int

    def one(x: np.ndarray, pivots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x, pivots = np.ascontiguousarray(x).copy(), np.ascontiguousarray(pivots).copy()
        taus = np.zeros(min(x.shape), x.dtype)
        if x.size:
            m, n = x.shape
            routine(101, m, n, x.ctypes.data_as(ctypes.c_void_p), n, pivots.ctypes.data_as(ctypes.c_void_p),
                    taus.ctypes.data_as(ctypes.c_void_p))  # 101: LAPACK_ROW_MAJOR
        return x, pivots, taus

    return per_matrix(a, 3, one, jpvt)


define_op(
    "geqp3", "(a: T, jpvt: U) -> (result: T, pivots: U, taus: V)",
    complex=True, sharding="fallback",
    infer=_infer_geqp3, reference=geqp3_values, weak_type="never",
    summary="QR factorization with column pivoting in LAPACK's packed form (`?geqp3`).",
    description="""
`a`: f32, f64, complex64 or complex128, `(..., m, n)`; `jpvt`: int32 `(..., n)`, nonzero for a
column to move to the front before the others are pivoted. Results: `a` packed as `geqrf`'s
(R of the permuted matrix above the diagonal, the reflectors below), the pivots `(..., n)`,
1-based (A[:, pivots - 1] = Q R), and `taus` `(..., min(m, n))` (jax's `lax.linalg.geqp3`).
""",
)


# --- householder_product -------------------------------------------------------------------------


def _infer_householder_product(a: TensorSpec, taus: TensorSpec) -> TensorSpec:
    name = "householder_product"
    check_matrix(name, a, "a", square=False)
    if taus.dtype != a.dtype:
        raise op_type_error(name, f"a and taus must have the same dtype, got {a.dtype} and {taus.dtype}")
    if taus.ndim != a.ndim - 1 or taus.shape[:-1] != a.shape[:-2]:
        raise op_value_error(name, f"taus must have shape (..., k) with a's batch dimensions, got shapes "
                                   f"{a.shape} and {taus.shape}")
    m, n = a.shape[-2:]
    if m < n:
        raise op_value_error(name, "The first argument to householder_product must have at least as many "
                                   f"rows as columns, got shape {a.shape}")
    if taus.shape[-1] > min(m, n):
        raise op_value_error(name, "The second argument to householder_product must not have more rows "
                                   "than the minimum of the first argument's rows and columns.")
    return a


def householder_product_values(a: np.ndarray, taus: np.ndarray) -> np.ndarray:
    expand = lapack_routine("ungqr" if np.iscomplexobj(a) else "orgqr", a.dtype)

    def one(x: np.ndarray, t: np.ndarray) -> tuple[np.ndarray]:
        if x.size == 0:
            return (x.copy(),)
        work = expand(x, t, lwork=-1)[1]  # the workspace query (SciPy has no ?orgqr_lwork)
        q, _, info = expand(x, t, lwork=max(1, int(np.real(work[0]))))
        return nans_unless(info == 0, q)

    return per_matrix(a, 1, one, taus)[0]


define_op(
    "householder_product", "(a: T, taus: U) -> (result: T)",
    complex=True, sharding="fallback",
    infer=_infer_householder_product, reference=householder_product_values, weak_type="never",
    summary="The product of elementary Householder reflectors (`?orgqr` / `?ungqr`).",
    description="""
`a`: f32, f64, complex64 or complex128, `(..., m, n)` with m >= n, the reflectors below its
diagonal (as `geqrf` leaves them; the rest is not read); `taus` of its type, `(..., k)`,
k <= n. The result `(..., m, n)` is the first n columns of H_1 ... H_k, an orthogonal (unitary)
matrix's (jax's `lax.linalg.householder_product`).
""",
)


# --- ormqr ---------------------------------------------------------------------------------------


def _infer_ormqr(a: TensorSpec, taus: TensorSpec, c: TensorSpec, *, left: bool,
                 transpose: bool) -> TensorSpec:
    del transpose
    name = "ormqr"
    check_matrix(name, a, "a", square=False)
    check_matrix(name, c, "c", square=False)
    if not a.dtype == taus.dtype == c.dtype:
        raise op_type_error(name, f"a, taus and c must have the same dtype, got {a.dtype}, {taus.dtype} and "
                                  f"{c.dtype}")
    if taus.ndim != a.ndim - 1 or not a.shape[:-2] == taus.shape[:-1] == c.shape[:-2]:
        raise op_value_error(name, f"a (..., m, n), taus (..., k) and c must have the same batch dimensions, "
                                   f"got shapes {a.shape}, {taus.shape} and {c.shape}")
    matrix, other = a.shape[-2:], c.shape[-2:]
    if left and other[0] != matrix[0]:
        raise op_value_error(name, "ormqr with left=True expects c to have the same number of rows as the "
                                   f"Householder matrix a. Got a shape {matrix} and c shape {other}.")
    if not left and other[1] != matrix[0]:
        raise op_value_error(name, "ormqr with left=False expects c to have the same number of columns as "
                                   f"the Householder matrix a has rows. Got a shape {matrix} and c shape "
                                   f"{other}.")
    if taus.shape[-1] > min(matrix):
        raise op_value_error(name, f"ormqr: taus may have at most min(m, n) reflectors, got {taus.shape[-1]} "
                                   f"for a of shape {matrix}")
    return c


def _ormqr(a: np.ndarray, taus: np.ndarray, c: np.ndarray, *, left: bool, transpose: bool) -> np.ndarray:
    complex_input = np.iscomplexobj(a)
    multiply = lapack_routine("unmqr" if complex_input else "ormqr", a.dtype)
    side, trans = "L" if left else "R", ("C" if complex_input else "T") if transpose else "N"

    def one(x: np.ndarray, t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray]:
        if y.size == 0 or t.size == 0:
            return (y.copy(),)
        x = x[:, : t.shape[0]]  # the reflectors' columns (SciPy's wrapper takes exactly k)
        work = multiply(side, trans, x, t, y, lwork=-1)[1]  # the workspace query, as jaxlib's
        product, _, _ = multiply(side, trans, x, t, y, lwork=max(1, int(np.real(work[0]))))
        return (product,)

    return per_matrix(a, 1, one, taus, c)[0]


define_op(
    "ormqr", "(a: T, taus: U, c: V) -> (result: V)",
    complex=True, sharding="fallback",
    attributes={"left": "bool", "transpose": "bool"},
    infer=_infer_ormqr, reference=_ormqr, weak_type="never",
    summary="Multiplication by Q of Householder reflectors, without forming Q (`?ormqr` / `?unmqr`).",
    description="""
`a`: f32, f64, complex64 or complex128, `(..., m, n)`, the reflectors below its diagonal (as
`geqrf` leaves them); `taus` of its type, `(..., k)`, k <= min(m, n); `c` of its type with the
same batch, `(..., m, p)` if `left`, else `(..., p, m)`. The result, `c`'s shape, is Q c (`left`)
or c Q, with Q^T (Q^H) for `transpose`; Q = H_1 ... H_k, the m x m orthogonal (unitary) matrix
of the reflectors (jax's `lax.linalg.ormqr`).
""",
)


# --- hessenberg ----------------------------------------------------------------------------------


def _infer_hessenberg(x: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
    check_matrix("hessenberg", x)
    if x.shape[-1] == 0:
        raise op_value_error("hessenberg", f"operand must have at least one row, got shape {x.shape}")
    return x, TensorSpec((*x.shape[:-2], x.shape[-1] - 1), x.dtype)


def _hessenberg(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    gehrd = lapack_routine("gehrd", x.dtype)

    def one(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = a.shape[-1]
        packed, taus, info = gehrd(a, lwork=_optimal_lwork(a.dtype, "gehrd", n, lo=0, hi=n - 1))
        return nans_unless(info == 0, packed, taus[: a.shape[-1] - 1])

    return per_matrix(x, 2, one)


define_op(
    "hessenberg", "(operand: T) -> (a: T, taus: U)",
    complex=True, sharding="fallback",
    infer=_infer_hessenberg, reference=_hessenberg, weak_type="never",
    summary="Reduction to upper Hessenberg form, in LAPACK's packed form (`?gehrd`).",
    description="""
`operand`: f32, f64, complex64 or complex128, `(..., n, n)`, n >= 1. Results of its type: `a`
with the Hessenberg matrix H on and above the first subdiagonal and the Householder vectors
below it, and `taus` `(..., n - 1)`; A = Q H Q^H with Q = H_1 ... H_{n-1} (jax's
`lax.linalg.hessenberg`, LAPACK's ilo = 1, ihi = n).
""",
)


# --- tridiagonal ---------------------------------------------------------------------------------


def _infer_tridiagonal(x: TensorSpec, *, lower: bool) -> tuple[TensorSpec, ...]:
    check_matrix("tridiagonal", x)
    *batch, n, _ = x.shape
    if n == 0:
        raise op_value_error("tridiagonal", f"The input to tridiagonal must be a square matrix. Got shape "
                                            f"{x.shape}.")
    real = dtypes.real_dtype(x.dtype)
    return (x, TensorSpec((*batch, n), real), TensorSpec((*batch, n - 1), real),
            TensorSpec((*batch, n - 1), x.dtype))


def _tridiagonal(x: np.ndarray, *, lower: bool) -> tuple[np.ndarray, ...]:
    name = "hetrd" if np.iscomplexobj(x) else "sytrd"
    reduce = lapack_routine(name, x.dtype)

    def one(a: np.ndarray) -> tuple[np.ndarray, ...]:
        lwork = _optimal_lwork(a.dtype, name, a.shape[-1], lower=int(lower))
        packed, d, e, taus, info = reduce(a, lower=int(lower), lwork=lwork)
        return nans_unless(info == 0, packed, d, e, taus)

    return per_matrix(x, 4, one)


define_op(
    "tridiagonal", "(operand: T) -> (a: T, d: U, e: V, taus: W)",
    complex=True, sharding="fallback",
    attributes={"lower": "bool"},
    infer=_infer_tridiagonal, reference=_tridiagonal, weak_type="never",
    summary="Reduction of a symmetric (Hermitian) matrix to tridiagonal form (`?sytrd` / `?hetrd`).",
    description="""
`operand`: f32, f64, complex64 or complex128, `(..., n, n)`, n >= 1; only the triangle `lower`
names is read. Results: `a` of its type with the tridiagonal matrix on the diagonal and the
first sub- (`lower`) or superdiagonal and the Householder vectors beyond; the diagonal `d`
`(..., n)` and off-diagonal `e` `(..., n - 1)` of the real type of its precision; `taus`
`(..., n - 1)` of its type (jax's `lax.linalg.tridiagonal`).
""",
)

