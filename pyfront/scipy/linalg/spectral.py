"""mlax.scipy.linalg's qr, svd, eigh and polar on the qr, eigh and svd primitives, ported from
jax/_src/scipy/linalg.py (SciPy's signatures, jax's values):

- qr: modes 'full' and 'r' (full matrices), 'economic'; a tuple (q, r) or (r,), with the
  column permutation p appended when ``pivoting`` ((q, r, p) or (r, p)), as jax.
- eigh: the standard problem only (b=None, type=1, eigvals=None, as jax), (w, v) or w.
- polar: jax's `_polar_2d` for each matrix, by the SVD (method='svd') or by jax's QR-based
  dynamically weighted Halley iteration (method='qdwh', the default: jax/_src/tpu/linalg/qdwh.py,
  QR steps while the weights are large, then Cholesky steps until the iterate settles).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from mlax import lax
from mlax.lax import decompositions as lax_linalg
from mlax.lax import decompositions_spectral as lax_spectral
from mlax.numpy import elementwise as ew
from mlax.numpy.creation import eye
from mlax.numpy.differences import _promote_inexact
from mlax.numpy.dtypes import finfo
from mlax.numpy.manipulation import concatenate
from mlax.numpy.math_extra import where
from mlax.numpy.norms import norm
from mlax.numpy.util import asarray
from mlax.numpy.vectorize import vectorize


def _inexact(a: Any) -> Any:
    (a,) = _promote_inexact(asarray(a))
    return a


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True) -> tuple[Any, ...]:
    """(q, r) of each matrix, full ('full') or reduced ('economic'); (r,) for mode 'r'; the 0-based
    column permutation p last with ``pivoting`` (a[..., p] = q @ r)."""
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, *rest = lax_spectral.qr(_inexact(a), pivoting=pivoting, full_matrices=full_matrices)
    return tuple(rest) if mode == "r" else (q, *rest)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd") -> Any:
    """(u, s, vh) of each matrix, or s alone without ``compute_uv``."""
    return lax_spectral.svd(_inexact(a), full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, turbo: bool = True, eigvals: None = None, type: int = 1,  # noqa: A002
         check_finite: bool = True) -> Any:
    """(w, v) of each symmetric matrix (w ascending, v's columns the eigenvectors), or w alone."""
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    v, w = lax_spectral.eigh(_inexact(a), lower=lower)
    return w if eigvals_only else (w, v)


# --- polar: jax's QDWH ----------------------------------------------------------------------------

_CHOLESKY_CUTOFF = 100


def _qr_step(u: Any, params: Any) -> Any:
    scaled, sqrt_c, e = params
    m, n = u.shape
    q, _ = lax_spectral.qr(concatenate([sqrt_c * u, eye(n, dtype=u.dtype)], axis=0), full_matrices=False)
    return e * u + scaled * (q[:m, :n] @ q[m:m + n, :n].T.conj())


def _cholesky_step(u: Any, params: Any) -> Any:
    a_minus_e, c, e = params
    n = u.shape[1]
    y = lax_linalg.cholesky(c * (u.T.conj() @ u) + eye(n, dtype=u.dtype), symmetrize_input=False)
    z = lax_linalg.triangular_solve(y, u.T, left_side=True, lower=True, conjugate_a=True).conj()
    z = lax_linalg.triangular_solve(y, z, left_side=True, lower=True, transpose_a=True,
                                    conjugate_a=True).T.conj()
    return e * u + a_minus_e * z


def _coefficients(eps: float, max_iterations: int) -> tuple[list[tuple[float, ...]], list[tuple[float, ...]]]:
    """The weights of the QR steps and of the Cholesky steps (Python floats, as jax's loop)."""
    low, tol = eps, 10.0 * eps / 2.0
    qr_steps, cholesky_steps = [], []
    while low + tol < 1 and len(qr_steps) + len(cholesky_steps) < max_iterations:
        l2 = low * low
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** (1 / 2)
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        low = low * (a + b * l2) / (1 + c * l2)
        e = b / c
        if c > _CHOLESKY_CUTOFF:
            qr_steps.append(((a - e) / c ** (1 / 2), c ** (1 / 2), e))
        else:
            cholesky_steps.append((a - e, c, e))
    return qr_steps, cholesky_steps


def _qdwh(x: Any, max_iterations: int, eps: float | None) -> tuple[Any, Any]:
    """jax's `_qdwh` for one m x n matrix (m >= n): the unitary factor and the positive one."""
    eps = float(finfo(x.dtype).eps) if eps is None else eps
    one_norm, inf_norm = norm(x, ord=1), norm(x, ord=np.inf)
    alpha_inverse = where(one_norm == 0, 1, lax.rsqrt(one_norm) * lax.rsqrt(inf_norm))
    u = x * alpha_inverse.astype(x.dtype)
    tol_norm = float(np.cbrt(10.0 * eps / 2.0))
    qr_steps, cholesky_steps = _coefficients(eps, max_iterations)

    def iterate(u: Any, coefs: list[tuple[float, ...]], step: Any, test: bool) -> tuple[Any, Any]:
        if not coefs:
            return u, asarray(True)
        table = asarray(np.asarray(coefs)).astype(x.dtype)

        def body(k: Any, state: tuple[Any, Any]) -> tuple[Any, Any]:
            previous, _ = state
            row = table[k]
            new = step(previous, (row[0], row[1], row[2]))
            return new, (norm(new - previous) > tol_norm) if test else asarray(True)

        return lax.fori_loop(0, len(coefs), body, (u, asarray(True)))

    u, _ = iterate(u, qr_steps, _qr_step, False)
    u, not_converged = iterate(u, cholesky_steps, _cholesky_step, True)
    fixed = (3 - 1 / 3, 3, 1 / 3)  # jax's get_chol_params(3, 1, 3): (a - e, c, e) with e = b / c

    def cond(state: tuple[Any, Any, Any]) -> Any:
        k, _, going = state
        return ew.logical_and(going, k < max_iterations)

    def body(state: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
        k, previous, _ = state
        new = _cholesky_step(previous, fixed)
        return k + 1, new, norm(new - previous) > tol_norm

    start = len(qr_steps) + len(cholesky_steps)
    _, u, _ = lax.while_loop(cond, body, (asarray(start, dtype=np.int32), u, not_converged))
    u = 1.5 * u - 0.5 * u @ (u.T.conj() @ u)
    h = u.T.conj() @ x
    return u, (h + h.T.conj()) / 2


def _polar_2d(a: Any, side: str, method: str, eps: float | None,
              max_iterations: int | None) -> tuple[Any, Any]:
    m, n = a.shape
    if method == "qdwh":
        iterations = 10 if max_iterations is None else int(max_iterations)
        if m >= n and side == "right":
            return _qdwh(a, iterations, eps)
        if m < n and side == "left":
            unitary, posdef = _qdwh(a.T.conj(), iterations, eps)
            return unitary.T.conj(), posdef.T.conj()
        raise NotImplementedError("method='qdwh' only supports mxn matrices where m < n where side='right' "
                                  f"and m >= n side='left', got {a.shape} with side={side!r}")
    if method == "svd":
        u, s, vh = lax_spectral.svd(a, full_matrices=False)
        s = s.astype(u.dtype)
        posdef = ((vh.T.conj() * s[None, :]) @ vh) if side == "right" else ((u * s[None, :]) @ u.T.conj())
        return u @ vh, posdef
    raise ValueError(f"Unknown polar decomposition method {method}.")


def polar(a: Any, side: str = "right", *, method: str = "qdwh", eps: float | None = None,
          max_iterations: int | None = None) -> tuple[Any, Any]:
    """(u, p) with a = u p (``side`` 'right', p n x n) or a = p u ('left', p m x m), p positive
    semidefinite, for each matrix of ``a``."""
    arr = asarray(a)
    if arr.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ("right", "left"):
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    signature = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    core = functools.partial(_polar_2d, side=side, method=method, eps=eps, max_iterations=max_iterations)
    return vectorize(core, signature=signature)(arr)


__all__ = ["eigh", "polar", "qr", "svd"]
