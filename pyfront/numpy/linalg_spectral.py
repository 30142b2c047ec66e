"""`mlax.numpy.linalg`'s functions on the qr, eigh and svd primitives: qr, svd, svdvals, eigh,
eigvalsh, pinv, lstsq, matrix_rank, cond, the spectral matrix norms and slogdet(method='qr'),
ported from jax/_src/numpy/linalg.py so that values and derivatives are jax's:

- svd(hermitian=True) is jax's: the eigendecomposition, |w| sorted descending with the
  eigenvectors and the signs of w following.
- pinv is jax's `_pinv` (an SVD with small singular values cut at rtol * s_max) under jax's
  custom JVP (Golub and Pereyra's formula in pinv itself), so its derivative is defined where
  the SVD's is not (repeated singular values).
- slogdet(method='qr'): log|det| from R's diagonal (the same numbers as jax's geqrf), the sign
  from R's diagonal and det(Q) (jax reads det(Q) off the reflectors' taus; mlax's qr op expands
  them, so the sign of det(Q), +-1, comes from an LU of Q), under slogdet's custom JVP.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from mlax import lax
from mlax.custom_derivatives import custom_jvp
from mlax.lax import decompositions_spectral as lax_spectral
from mlax.lax.decompositions import symmetrize
from mlax.lax.householder import geqrf
from mlax.numpy import elementwise as ew
from mlax.numpy import linalg_decompositions as lu_based
from mlax.numpy import reductions as red
from mlax.numpy.creation import empty, zeros
from mlax.numpy.dtypes import finfo
from mlax.numpy.indexing import take_along_axis
from mlax.numpy.manipulation import expand_dims, swapaxes
from mlax.numpy.math_extra import isnan, where
from mlax.numpy.norms import norm
from mlax.numpy.products import matmul
from mlax.numpy.util import asarray


class QRResult(NamedTuple):
    Q: Any
    R: Any


class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


def _inexact(fname: str, *xs: Any) -> list[Any]:
    return lu_based._inexact(fname, *xs)


def _t(x: Any) -> Any:
    return swapaxes(x, -1, -2)


def _h(x: Any) -> Any:
    """The conjugate transpose of each matrix (jax's `_H`)."""
    return _t(x).conj()


def qr(a: Any, mode: str = "reduced") -> Any:
    """(Q, R) of each matrix, reduced ('reduced', 'full') or complete ('complete'); R alone for 'r'."""
    (a,) = _inexact("jnp.linalg.qr", a)
    if mode == "raw":  # LAPACK's packed reflectors, transposed as jax returns them
        packed, taus = geqrf(a)
        return QRResult(_t(packed), taus)
    if mode not in ("reduced", "r", "full", "complete"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_spectral.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def _hermitian_svd(a: Any, compute_uv: bool) -> Any:
    """jax's svd(hermitian=True): singular values |w| in descending order, their eigenvectors
    as U and the signs of w folded into Vh."""
    vectors, w = lax_spectral.eigh(a)
    s = ew.abs(w)
    if not compute_uv:
        return lax.rev(lax.sort(s, dimension=-1), dimensions=(s.ndim - 1,))
    order = lax.broadcasted_iota(np.int32, s.shape, s.ndim - 1)
    s, order, sign = lax.sort((s, order, ew.sign(w)), dimension=-1, num_keys=1)
    s, order, sign = (lax.rev(v, dimensions=(s.ndim - 1,)) for v in (s, order, sign))
    u = take_along_axis(vectors, order[..., None, :], axis=-1)
    return SVDResult(u, s, _h(u * sign[..., None, :].astype(u.dtype)))


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index: tuple[int, int] | None = None) -> Any:
    """(U, S, Vh) of each matrix (S descending), or S alone without ``compute_uv``."""
    (a,) = _inexact("jnp.linalg.svd", a)
    if hermitian:
        return _hermitian_svd(a, compute_uv)
    out = lax_spectral.svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                           subset_by_index=subset_by_index)
    return SVDResult(*out) if compute_uv else out


def svdvals(x: Any, /) -> Any:
    """The singular values of each matrix, descending."""
    (x,) = _inexact("jnp.linalg.svdvals", x)
    return svd(x, compute_uv=False)


def _lower(uplo: str | None) -> bool:
    if uplo is None or uplo == "L":
        return True
    if uplo == "U":
        return False
    raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {uplo}")


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:  # noqa: N803 (jnp)
    """(eigenvalues ascending, eigenvectors as columns) of each symmetric matrix."""
    (a,) = _inexact("jnp.linalg.eigh", a)
    v, w = lax_spectral.eigh(a, lower=_lower(UPLO), symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Any:  # noqa: N803
    """The eigenvalues of each symmetric matrix, ascending."""
    (a,) = _inexact("jnp.linalg.eigvalsh", a)
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


def matrix_rank(M: Any, rtol: Any = None, *, hermitian: bool = False, tol: Any = None) -> Any:  # noqa: N803
    """The number of singular values above ``rtol`` times the largest (by default the largest
    times max(m, n) times the dtype's eps)."""
    (M,) = _inexact("jnp.linalg.matrix_rank", M)
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    if M.ndim < 2:
        return red.any(ew.not_equal(M, 0)).astype(np.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = red.max(s, axis=-1) * np.asarray(max(M.shape[-2:]), s.dtype) * finfo(s.dtype).eps
    rtol = asarray(rtol)
    rtol = expand_dims(rtol, rtol.ndim)
    return red.sum(ew.greater(s, rtol), axis=-1)


def _pinv_values(a: Any, rtol: Any, hermitian: bool) -> Any:
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return empty(a.shape[:-2] + (n, m), a.dtype)
    if rtol is None:
        rtol = 10.0 * max(m, n) * np.asarray(finfo(a.dtype).eps)
    rtol = asarray(rtol)
    u, s, vh = svd(a.conj(), full_matrices=False, hermitian=hermitian)
    rtol = lax.expand_dims(rtol[..., None], range(s.ndim - rtol.ndim - 1))
    cutoff = rtol * s[..., 0:1]
    s = where(ew.greater(s, cutoff), s, np.inf).astype(u.dtype)
    return matmul(_t(vh), ew.divide(_t(u), s[..., None])).astype(a.dtype)


def _pinv_rule(rtol: Any, hermitian: bool) -> Any:
    """pinv with jax's custom JVP for one (rtol, hermitian)."""

    @custom_jvp
    def pinv_(a: Any) -> Any:
        return _pinv_values(a, rtol, hermitian)

    @pinv_.defjvp
    def pinv_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
        (a,), (a_dot,) = primals, tangents
        p = pinv_(a)
        if hermitian:
            a, a_dot = symmetrize(a), symmetrize(a_dot)
        m, n = a.shape[-2:]
        if m >= n:
            s = matmul(matmul(p, _h(p)), _h(a_dot))
            t = matmul(matmul(_h(a_dot), _h(p)), p)
            p_dot = (-matmul(matmul(p, a_dot), p) + s - matmul(matmul(s, a), p) + t
                     - matmul(matmul(p, a), t))
        else:
            s = matmul(p, matmul(_h(p), _h(a_dot)))
            t = matmul(_h(a_dot), matmul(_h(p), p))
            p_dot = (-matmul(p, matmul(a_dot, p)) + s - matmul(s, matmul(a, p)) + t
                     - matmul(p, matmul(a, t)))
        return p, p_dot

    return pinv_


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Any:
    """The Moore-Penrose pseudo-inverse of each matrix (through the SVD)."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    (a,) = _inexact("jnp.linalg.pinv", a)
    return _pinv_rule(rtol, hermitian)(a)


def lstsq(a: Any, b: Any, rcond: float | None = None, *, numpy_resid: bool = False) -> tuple[Any, ...]:
    """(x, residuals, rank, s): the least-squares solution of ``a @ x = b`` through the SVD."""
    a, b = _inexact("jnp.linalg.lstsq", a, b)
    if a.shape[0] != b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim != 2:
        raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or two-dimensional")
    m, n = a.shape
    eps = finfo(a.dtype).eps
    if a.size == 0:
        s, rank, x = empty(0, a.dtype), asarray(0, dtype=int), zeros((n, *b.shape[1:]), a.dtype)
    else:
        rcond = float(eps) * max(n, m) if rcond is None else where(asarray(rcond) < 0, eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = ew.logical_and(ew.greater(s, 0), ew.greater_equal(s, asarray(rcond, dtype=s.dtype) * s[0]))
        rank = red.sum(mask)
        safe_s = where(mask, s, 1).astype(a.dtype)
        s_inv = where(mask, 1 / safe_s, 0)[:, None]
        x = matmul(_h(vt), s_inv * matmul(_h(u), b))
    if numpy_resid and (int(rank) < n or m <= n):
        resid = asarray([], dtype=a.dtype)
    else:
        resid = norm(b - matmul(a, x), axis=0) ** 2
    return (x.ravel() if vector else x), resid, rank, s


def cond(x: Any, p: Any = None) -> Any:
    """The condition number of each matrix in the ``p`` norm (2 by default: s_max / s_min)."""
    (arr,) = _inexact("cond", x)
    if arr.ndim < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got arr.shape={arr.shape!r}")
    if arr.shape[-1] == 0 or arr.shape[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got arr.shape={arr.shape!r}")
    if p is None or p == 2:
        s = svdvals(arr)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(arr)
        r = s[..., -1] / s[..., 0]
    else:
        if arr.shape[-2] != arr.shape[-1]:
            raise ValueError(f"jnp.linalg.cond: for p={p!r}, array must be square; got "
                             f"arr.shape={arr.shape!r}")
        r = norm(arr, ord=p, axis=(-2, -1)) * norm(lu_based.inv(arr), ord=p, axis=(-2, -1))
    nan_free = ew.logical_not(red.any(isnan(arr), axis=(-2, -1)))
    return where(ew.logical_and(isnan(r), nan_free), np.inf, r)


__all__ = ["cond", "eigh", "eigvalsh", "lstsq", "matrix_rank", "pinv", "qr", "svd", "svdvals"]
