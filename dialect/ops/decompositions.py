"""Matrix decompositions: cholesky, triangular_solve and lu, as jax's `lax.linalg` primitives.

Each works on the last two dimensions of its operands; leading dimensions are a batch (equal
on both operands of triangular_solve). Element types f32, f64, complex64 and complex128. The
reference calls the LAPACK/BLAS routine jax's CPU lowering calls (SciPy's `?potrf`, `?trsm`,
`?getrf`), one matrix at a time, so the interpreter, the native
CPU backend (which calls the same routines, passes/lower_to_linalg/decompositions.py) and
XLA (jaxlib's LAPACK custom calls) agree to the last bit where the library is the same.
Failures are values, not errors, as in jax: a matrix that is not positive definite has a
Cholesky factor of NaNs (below the zeros of the upper triangle), a singular triangular system
gives inf/NaN, a singular LU is returned as LAPACK leaves it (only an invalid argument would
give NaN).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from mlax.dialect.ops.common import op_type_error, op_value_error
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec

INDEX_DTYPE = np.dtype(np.int32)
FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
COMPLEX_DTYPES = (np.dtype(np.complex64), np.dtype(np.complex128))
LAPACK_PREFIXES = {np.dtype(np.float32): "s", np.dtype(np.float64): "d", np.dtype(np.complex64): "c",
                   np.dtype(np.complex128): "z"}


def check_matrix(op: str, x: TensorSpec, what: str = "operand", square: bool = True) -> None:
    """Refuse what LAPACK has no routine for (jax's type errors) and shapes that are not a batch of
    (square) matrices."""
    if x.dtype not in FLOAT_DTYPES + COMPLEX_DTYPES:
        raise op_type_error(op, f"{what} must have element type f32, f64, complex64 or complex128, got "
                                f"{x.dtype}")
    if x.ndim < 2:
        raise op_type_error(op, f"{what} must have rank at least 2 (a batch of matrices), got shape "
                                f"{x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise op_value_error(op, f"{what} must be a batch of square matrices, got shape {x.shape}")


def nans_like(a: np.ndarray) -> np.ndarray:
    """NaNs of ``a``'s shape and type (NaN in both parts of a complex type, as jax's failures)."""
    return np.full_like(a, complex(np.nan, np.nan) if np.iscomplexobj(a) else np.nan)


def nans_unless(ok: bool, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """``arrays`` as they are if ``ok`` (LAPACK's info == 0), else NaNs like them: jax's lowerings
    make every result of a failed matrix NaN."""
    return arrays if ok else tuple(nans_like(a) for a in arrays)


def per_matrix(x: np.ndarray, results: int, solve: Callable[..., tuple[np.ndarray, ...]],
                *others: np.ndarray) -> tuple[np.ndarray, ...]:
    """``solve`` on every matrix of the batch, stacked back into ``results`` arrays."""
    batch = x.shape[:-2]
    flat = [a.reshape(math.prod(batch), *a.shape[len(batch):]) for a in (x, *others)]
    outs = [solve(*items) for items in zip(*flat, strict=True)] if flat[0].shape[0] else []
    if not outs:  # an empty batch: ask one matrix of zeros for the shapes
        probe = solve(*(np.zeros(a.shape[1:], a.dtype) for a in flat))
        return tuple(np.zeros((*batch, *p.shape), p.dtype) for p in probe)
    return tuple(np.stack([o[i] for o in outs]).reshape(*batch, *outs[0][i].shape) for i in range(results))


def lapack_routine(name: str, dtype: np.dtype) -> Callable[..., tuple]:
    """SciPy's wrapper of the BLAS/LAPACK routine ``name`` for ``dtype`` (scipy.linalg is imported
    on first use: it costs ~0.2 s)."""
    import scipy.linalg.blas
    import scipy.linalg.lapack

    module = scipy.linalg.blas if name == "trsm" else scipy.linalg.lapack
    return getattr(module, LAPACK_PREFIXES[np.dtype(dtype)] + name)


# --- cholesky ------------------------------------------------------------------------------------


def _infer_cholesky(x: TensorSpec) -> TensorSpec:
    check_matrix("cholesky", x)
    return x


def _cholesky(x: np.ndarray) -> np.ndarray:
    potrf = lapack_routine("potrf", x.dtype)

    def one(a: np.ndarray) -> tuple[np.ndarray]:
        if a.size == 0:
            return (a.copy(),)
        factor, info = potrf(a, lower=1, clean=1)
        return (factor if info == 0 else np.tril(nans_like(a)),)

    return per_matrix(x, 1, one)[0]


define_op(
    "cholesky", "(operand: T) -> (result: T)",
    complex=True, sharding="fallback",
    infer=_infer_cholesky, reference=_cholesky, weak_type="never",
    summary="The lower Cholesky factor L (A = L L^T) of each matrix, from its lower triangle.",
    description="""
`operand`: f32, f64 or complex, shape `(..., n, n)`; the result has its type (A = L L^H for a
complex matrix, which must be Hermitian). Only the lower triangle
of each matrix is read (the front end symmetrizes first, as `jax.lax.linalg.cholesky`); the
result is lower triangular with zeros above the diagonal. Where a matrix is not positive
definite (LAPACK `?potrf` reports `info != 0`) its factor's lower triangle is NaN, as jax
returns.
""",
)


# --- triangular_solve ----------------------------------------------------------------------------

_SOLVE_FLAGS = ("left_side", "lower", "transpose_a", "conjugate_a", "unit_diagonal")


def _infer_triangular_solve(a: TensorSpec, b: TensorSpec, *, left_side: bool, lower: bool,
                            transpose_a: bool, conjugate_a: bool, unit_diagonal: bool) -> TensorSpec:
    name = "triangular_solve"
    check_matrix(name, a, "a")
    check_matrix(name, b, "b", square=False)
    if a.dtype != b.dtype:
        raise op_type_error(name, f"a and b must have the same dtype, got {a.dtype} and {b.dtype}")
    if a.shape[:-2] != b.shape[:-2]:
        raise op_type_error(name, f"a and b must have the same batch dimensions, got shapes {a.shape} and "
                                  f"{b.shape}")
    common = -2 if left_side else -1
    if a.shape[-1] != b.shape[common]:
        raise op_value_error(name, f"incompatible shapes {a.shape} and {b.shape} "
                                   f"(left_side={bool(left_side)})")
    return b


def _triangular_solve(a: np.ndarray, b: np.ndarray, *, left_side: bool, lower: bool, transpose_a: bool,
                      conjugate_a: bool, unit_diagonal: bool) -> np.ndarray:
    trsm = lapack_routine("trsm", a.dtype)

    trans = (2 if conjugate_a else 1) if transpose_a else 0  # op(A) = A, A^T or A^H

    def one(m: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray]:
        if rhs.size == 0:
            return (rhs.copy(),)
        with np.errstate(all="ignore"):
            return (trsm(1.0, np.conj(m) if conjugate_a and not transpose_a else m, rhs,
                         side=0 if left_side else 1, lower=int(lower), trans_a=trans,
                         diag=int(unit_diagonal)),)

    return per_matrix(a, 1, one, b)[0]


define_op(
    "triangular_solve", "(a: T, b: U) -> (result: U)",
    complex=True, sharding="fallback",
    attributes=dict.fromkeys(_SOLVE_FLAGS, "bool"),
    infer=_infer_triangular_solve, reference=_triangular_solve, weak_type="never",
    summary="X with op(A) X = B (left_side) or X op(A) = B, A triangular (BLAS `?trsm`).",
    description="""
`a`: f32, f64 or complex, `(..., m, m)`; `b` of its element type and batch dimensions, `(..., m, n)`
when `left_side` else `(..., n, m)`; the result has `b`'s type. Only the `lower` (else upper)
triangle of `a` is read, and not its diagonal when `unit_diagonal` (taken as ones).
`op(A)` is `A^T` when `transpose_a`, conjugated (`A^H`, or `conj(A)` without `transpose_a`) when
`conjugate_a` (no effect on real types). A
zero on the diagonal gives inf/NaN, as BLAS does. The attributes are jax's
`triangular_solve` parameters.
""",
)


# --- lu ------------------------------------------------------------------------------------------


def _infer_lu(x: TensorSpec) -> tuple[TensorSpec, TensorSpec, TensorSpec]:
    check_matrix("lu", x, square=False)
    *batch, m, n = x.shape
    return x, TensorSpec((*batch, min(m, n)), INDEX_DTYPE), TensorSpec((*batch, m), INDEX_DTYPE)


def pivots_to_permutation(pivots: np.ndarray, size: int) -> np.ndarray:
    """The permutation the row swaps ``pivots`` (row i swapped with row pivots[i], in order) make
    of ``range(size)``, over the leading dimensions (jax's lu_pivots_to_permutation)."""
    perm = np.broadcast_to(np.arange(size, dtype=INDEX_DTYPE), (*pivots.shape[:-1], size)).copy()
    count = math.prod(pivots.shape[:-1])
    rows = perm.reshape(count, size)
    for row, swaps in zip(rows, pivots.reshape(count, pivots.shape[-1]), strict=True):
        for i, j in enumerate(swaps):
            row[i], row[j] = row[j], row[i]
    return rows.reshape(perm.shape)


def _lu(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    getrf = lapack_routine("getrf", x.dtype)

    def one(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if a.size == 0:
            return a.copy(), np.zeros(0, INDEX_DTYPE)
        factors, pivots, info = getrf(a)
        return (factors if info >= 0 else nans_like(a)), pivots.astype(INDEX_DTYPE)

    factors, pivots = per_matrix(x, 2, one)
    return factors, pivots, pivots_to_permutation(pivots, x.shape[-2])


define_op(
    "lu", "(operand: T) -> (lu: T, pivots: U, permutation: V)",
    complex=True, sharding="fallback",
    infer=_infer_lu, reference=_lu, weak_type="never",
    summary="LU with partial pivoting (LAPACK `?getrf`): P A = L U, with the row swaps and the permutation.",
    description="""
`operand`: f32, f64 or complex, `(..., m, n)`. `lu` has its type: U in the upper triangle, L (unit
diagonal, not stored) below it. `pivots`: i32 `(..., min(m, n))`, 0-based: row i was swapped
with row `pivots[i]`, in order. `permutation`: i32 `(..., m)`, those swaps applied to
`0 .. m-1`, so that `A[permutation] = L U`. A singular matrix factors as LAPACK leaves it (a
zero on U's diagonal), as jax returns it. The results are jax's `lu` primitive's.
""",
)


