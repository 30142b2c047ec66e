"""mlax.scipy.linalg's hessenberg, qr_multiply and eigh_tridiagonal (jax.scipy.linalg's signatures and
values), on the Householder primitives (mlax.lax.linalg.hessenberg, geqrf, geqp3,
householder_product, ormqr).

- hessenberg: jax's: H is the upper band of gehrd's packed result, Q the product of its
  reflectors (shifted by one row and column, with 1 in the corner).
- qr_multiply: jax's: geqrf (geqp3 with ``pivoting``), then the reflectors applied to ``c``
  without forming Q (the ormqr op, LAPACK ``?ormqr``), so the values are jax's to the bit.
- eigh_tridiagonal: jax's bisection on Sturm sequence counts (pure array code, no LAPACK), all
  wanted eigenvalues at once; the eigenvectors by jax's inverse iteration: from random vectors
  (jax's fixed key 42 unless given one), every eigenvector's shifted system solved at once with
  tridiagonal_solve(perturb_singular=True) (the matrix is singular at an eigenvalue), the
  vectors of each cluster of close eigenvalues orthonormalized by QR after every step, until
  no norm grows by 10% or after 5 steps (LAPACK xSTEIN's rule).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import mlax.numpy as mnp
from mlax import lax
from mlax.lax import householder
from mlax.lax.linalg import tridiagonal_solve
from mlax.numpy.differences import _promote_inexact

__all__ = ["eigh_tridiagonal", "hessenberg", "qr_multiply"]


def hessenberg(a: Any, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> Any:
    """H (zero below the first subdiagonal), and Q if ``calc_q``, with A = Q H Q^H."""
    del overwrite_a, check_finite  # unused, as in jax
    a = mnp.asarray(a)
    n = a.shape[-1]
    if n == 0:
        return (mnp.zeros_like(a), mnp.zeros_like(a)) if calc_q else mnp.zeros_like(a)
    packed, taus = householder.hessenberg(a)
    h = mnp.triu(packed, -1)
    if not calc_q:
        return h
    q = householder.householder_product(packed[..., 1:, :-1], taus)
    corner = mnp.zeros((n, n), a.dtype).at[0, 0].set(1)
    return h, mnp.pad(q, [(0, 0)] * (q.ndim - 2) + [(1, 0), (1, 0)]) + corner


def _check_qr_multiply_shapes(a: Any, c: Any, mode: str) -> None:
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape {tuple(a.shape)} "
                         f"so Q has {k} columns, but c has {c.shape[-2]} rows (expected {k}).")
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has shape {tuple(a.shape)} "
                         f"so Q has {m} rows, but c has {c.shape[-1]} columns (expected {m}).")


def qr_multiply(a: Any, c: Any, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False) -> tuple[Any, ...]:
    """``(Q @ c, R)`` (mode 'left') or ``(c @ Q, R)`` (mode 'right'), Q and R those of the
    reduced QR decomposition of ``a`` (column-pivoted, with the 0-based permutation P as a third
    result, if ``pivoting``); ``conj(Q)`` if ``conjugate``. A 1-D ``c`` is a column ('left') or
    row ('right') and the product is raveled."""
    del overwrite_a, overwrite_c  # unused, as in jax
    a, c = _promote_inexact(a, c)
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    _check_qr_multiply_shapes(a, c, mode)
    batch = mnp.broadcast_shapes(a.shape[:-2], c.shape[:-2])
    a = mnp.broadcast_to(a, batch + a.shape[-2:])
    c = mnp.broadcast_to(c, batch + c.shape[-2:])
    m, n = a.shape[-2:]
    k = min(m, n)
    if pivoting:
        packed, pivots, taus = householder.geqp3(a, mnp.zeros(a.shape[:-2] + (n,), np.int32))
    else:
        packed, taus = householder.geqrf(a)
    if m > n and mode == "left":  # Q is m x m: c's rows below k meet its other columns, as zeros
        c = mnp.concatenate([c, mnp.zeros(c.shape[:-2] + (m - k,) + c.shape[-1:], c.dtype)], axis=-2)
    if conjugate:  # conj(Q) c = (c^T Q^H)^T: a transpose instead of a conjugation, as jax
        c = c.swapaxes(-1, -2)
    product = householder.ormqr(packed, taus, c, left=(mode == "left") != conjugate, transpose=conjugate)
    if conjugate:
        product = product.swapaxes(-1, -2)
    if mode == "right":
        product = product[..., :k]
    if onedim:
        product = product.ravel()
    r = mnp.triu(packed[..., :k, :])
    return (product, r, pivots - 1) if pivoting else (product, r)  # 0-based pivots, as jax's


def _sturm_counts(alpha: Any, beta_sq: Any, pivmin: Any, alpha0_perturbation: Any, x: Any) -> Any:
    """For each shift in ``x``: how many eigenvalues of the tridiagonal matrix lie below it (the
    negative pivots of the LDL^T factorization of T - x I, each pivot kept away from zero)."""
    q = alpha[0] - x
    count = (q < 0).astype(np.int32)
    q = mnp.where(alpha[0] == x, alpha0_perturbation, q)

    def step(carry: tuple[Any, Any], row: tuple[Any, Any]) -> tuple[tuple[Any, Any], None]:
        q, count = carry
        a, b_sq = row
        q = a - b_sq / q - x
        small = q <= pivmin
        return (mnp.where(small, mnp.minimum(q, -pivmin), q), mnp.where(small, count + 1, count)), None

    (_, count), _ = lax.scan(step, (q, count), (alpha[1:], beta_sq))
    return count


def _target_counts(n: int, select: str, select_range: Any) -> Any:
    if select == "a":
        return mnp.arange(n, dtype=np.int32)
    if select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        return mnp.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    raise ValueError("'select must have a value in {'a', 'i', 'v'}.")


def _clusters(eigvals: Any) -> tuple[Any, Any, Any]:
    """Where the runs of (sorted) eigenvalues closer than sqrt(eps) |T| start and end, padded
    to the most runs there can be, and how many there are: their eigenvectors are not unique
    and are orthonormalized together."""
    k = eigvals.shape[0]
    gaptol = np.sqrt(np.finfo(eigvals.dtype).eps) * mnp.maximum(mnp.abs(eigvals[0]), mnp.abs(eigvals[-1]))
    close = eigvals[1:] - eigvals[:-1] < gaptol
    left, right = mnp.pad(close, (1, 0), constant_values=False), mnp.pad(close, (0, 1), constant_values=False)
    first, last = ~left & right, left & ~right
    size = k // 2 + 1
    return mnp.nonzero(first, size=size)[0], mnp.nonzero(last, size=size)[0] + 1, mnp.sum(first)


def _orthonormalize_clusters(v: Any, starts: Any, ends: Any, count: Any) -> Any:
    """Each cluster's rows of ``v`` replaced by an orthonormal basis of their span (jax's QR of
    the cluster moved to the top of a k-row block, the other rows masked)."""
    k, n = v.shape
    rows = mnp.arange(k)

    def cluster(i: Any, v: Any) -> Any:
        start, end = starts[i], ends[i]
        mask = (rows < end - start).astype(v.dtype)[:, None]
        block = lax.dynamic_slice(mnp.pad(v, ((0, k), (0, 0))), (start, 0), (k, n)) * mask
        q = mnp.linalg.qr(block.T)[0].T * mask
        update = lax.dynamic_update_slice(mnp.zeros((2 * k, n), v.dtype), q, (start, 0))[:k]
        return mnp.where(((rows >= start) & (rows < end))[:, None], update, v)

    return lax.fori_loop(0, count, cluster, v)


def _inverse_iteration(alpha: Any, beta: Any, eigvals: Any, key: Any) -> Any:
    """The eigenvectors (rows) of the tridiagonal matrix (real diagonal ``alpha``, off-diagonal
    ``beta``) for ``eigvals``, by jax's inverse iteration."""
    (k,), n = eigvals.shape, alpha.shape[0]
    dtype = np.result_type(alpha.dtype, beta.dtype)
    starts, ends, count = _clusters(eigvals)
    from mlax import random  # here: mlax.random imports the modules that import mlax.scipy.linalg

    v = random.normal(key, (k, n), dtype=np.finfo(dtype).dtype).astype(dtype)
    v = v / mnp.linalg.norm(v, axis=-1, keepdims=True).astype(dtype)
    shifted = (alpha[None, :] - eigvals[:, None]).astype(dtype)
    dl = mnp.broadcast_to(mnp.pad(mnp.conj(beta), (1, 0))[None, :], (k, n)).astype(dtype)
    du = mnp.broadcast_to(mnp.pad(beta, (0, 1))[None, :], (k, n)).astype(dtype)

    def step(state: tuple[Any, Any, Any, Any]) -> tuple[Any, Any, Any, Any]:
        i, v, norm, _ = state
        v_new = tridiagonal_solve(dl, shifted, du, v[:, :, None].astype(dtype), perturb_singular=True)[..., 0]
        norm_new = mnp.linalg.norm(v_new, axis=-1, keepdims=True)
        v_new = _orthonormalize_clusters(v_new / norm_new.astype(dtype), starts, ends, count)
        return i + 1, v_new, norm_new[:, 0], norm

    def growing(state: tuple[Any, Any, Any, Any]) -> Any:
        i, _, norm, norm_old = state
        return mnp.logical_and(i < 5, mnp.any(norm >= 1.1 * norm_old))  # LAPACK xSTEIN's limits

    state = (0, v, mnp.ones(k, eigvals.dtype), mnp.zeros(k, eigvals.dtype))
    return lax.while_loop(growing, step, state)[1]


def eigh_tridiagonal(d: Any, e: Any, *, eigvals_only: bool = False, select: str = "a",
                     select_range: tuple[float, float] | None = None, tol: float | None = None,
                     key: Any = None) -> Any:
    """The eigenvalues (ascending) of the symmetric (Hermitian) tridiagonal matrix with diagonal
    ``d`` and off-diagonal ``e``, by bisection to ``tol`` (jax's algorithm), and unless
    ``eigvals_only`` the eigenvectors (columns) by inverse iteration from random vectors of
    ``key``."""
    alpha, beta = mnp.asarray(d), mnp.asarray(e)
    supported = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))
    if alpha.dtype != beta.dtype:
        raise TypeError(f"diagonal and off-diagonal values must have same dtype, got {alpha.dtype} and "
                        f"{beta.dtype}")
    if alpha.dtype not in supported:
        raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                        f"jax.scipy.linalg.eigh_tridiagonal, got {alpha.dtype} and {beta.dtype}")
    if not eigvals_only and key is None:
        from mlax import random

        key = random.key(42)
    n = alpha.shape[0]
    if n <= 1:
        return mnp.real(alpha) if eigvals_only else (mnp.real(alpha), mnp.eye(n, dtype=alpha.dtype))
    if mnp.iscomplexobj(alpha):
        alpha, beta_sq = mnp.real(alpha), mnp.real(beta * mnp.conj(beta))
        beta_abs = mnp.sqrt(beta_sq)
    else:
        beta_abs, beta_sq = mnp.abs(beta), mnp.square(beta)
    # Gershgorin bounds on the spectrum, and the smallest pivot the Sturm counts allow.
    row_sums = mnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
    lambda_max, lambda_min = mnp.max(alpha + row_sums), mnp.min(alpha - row_sums)
    t_norm = mnp.maximum(mnp.abs(lambda_min), mnp.abs(lambda_max))
    finfo = np.finfo(alpha.dtype)
    one = np.ones([], alpha.dtype)
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * mnp.maximum(1, mnp.max(beta_sq))
    alpha0_perturbation = mnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = mnp.maximum(tol, abs_tol)
    max_it = finfo.nmant + 1  # enough halvings to reach eps * |lambda| from the Gershgorin interval
    target = _target_counts(n, select, select_range)
    fudge = 2.1  # the starting interval: Gershgorin's, a little wider
    slack = mnp.array(n, alpha.dtype) * fudge * finfo.eps * t_norm
    shape = target.shape
    lower = mnp.broadcast_to(lambda_min - slack - 2 * fudge * pivmin, shape)
    upper = mnp.broadcast_to(lambda_max + slack + fudge * pivmin, shape)
    pivmin, alpha0_perturbation = (mnp.broadcast_to(v, shape) for v in (pivmin, alpha0_perturbation))

    def unfinished(state: tuple[Any, Any, Any, Any]) -> Any:
        i, lower, _, upper = state
        return mnp.logical_and(i < max_it, abs_tol < mnp.max(upper - lower))

    def bisect(state: tuple[Any, Any, Any, Any]) -> tuple[Any, Any, Any, Any]:
        i, lower, mid, upper = state
        counts = _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
        lower = mnp.where(counts <= target, mid, lower)
        upper = mnp.where(counts > target, mid, upper)
        return i + 1, lower, 0.5 * (lower + upper), upper

    _, _, mid, _ = lax.while_loop(unfinished, bisect, (0, lower, 0.5 * (upper + lower), upper))
    if eigvals_only:
        return mid
    return mid, _inverse_iteration(alpha, beta, mid, key).T
