"""mlax.scipy.linalg's functions on the Schur decomposition (the `mlax.schur` op, LAPACK `?gees`),
after jax/_src/scipy/linalg.py and jax/_src/third_party/scipy/linalg.py, so values and dtypes are
jax's:

- schur: T and Z; ``output='complex'`` casts to the complex type first (cgees/zgees), as jax.
- rsf2csf: the real Schur form made triangular by one Givens rotation per 2x2 block, chosen from
  the block's first eigenvalue in LAPACK's order (geev, as jax's jnp.linalg.eigvals).
- sqrtm: Bjorck and Hammarling's method on the complex Schur form (always complex, as jax):
  U = sqrt(T) column by column, U_ij = (T_ij - sum_k U_ik U_kj) / (U_ii + U_jj), 0 where the
  numerator is exactly zero (so singular matrices with zero eigenvalues stay finite).
- funm: Parlett's recurrence (Golub and Van Loan, algorithm 11.1.1) on the complex Schur form
  from rsf2csf, with jax's error estimate when ``disp=False``.
- solve_sylvester: Bartels-Stewart on the complex Schur forms of A and B^H (the triangular
  equation R Y + Y S^H = F solved a row at a time, from the bottom: each row is one triangular
  solve), or jax's ``method='eigen'``; NaN where an eigenvalue sum of A and B is below ``tol``.

None is differentiable: the schur op has no derivative in jax, and mlax raises as jax does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import mlax.numpy as jnp
from mlax import lax
from mlax.lax import linalg as lax_linalg
from mlax.numpy.complex_numbers import to_complex_dtype
from mlax.numpy.util import promote_dtypes, promote_dtypes_inexact
from mlax.numpy.vectorize import vectorize

__all__ = ["funm", "rsf2csf", "schur", "solve_sylvester", "sqrtm"]


def _conj_t(x: Any) -> Any:
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def schur(a: Any, output: str = "real") -> list[Any]:
    """The Schur decomposition A = Z T Z^H: ``[T, Z]`` (as jax, a list), T quasi upper triangular
    for ``output='real'`` and upper triangular for ``'complex'``."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got {output=}.")
    a = jnp.asarray(a)
    if output == "complex":
        a = a.astype(to_complex_dtype(a.dtype))
    return lax_linalg.schur(a)


def _first_eigenvalue(block: Any) -> Any:
    return lax_linalg.eig(block, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0][0]


def _rsf2csf_2d(t: Any, z: Any) -> tuple[Any, Any]:
    n = t.shape[0]
    if n == 1:
        return t, z
    eps = jnp.finfo(t.dtype).eps
    index = jnp.arange(n)

    def rotate(m: Any, t: Any, z: Any) -> tuple[Any, Any]:
        """The Givens rotation G that zeroes T[m, m-1], applied to rows m-1, m of T (from column
        m-1 on), to its columns m-1, m (rows up to m) and to Z's columns m-1, m."""
        mu = _first_eigenvalue(lax.dynamic_slice(t, (m - 1, m - 1), (2, 2))) - t[m, m]
        sub = t[m, m - 1]
        r = jnp.sqrt(jnp.real(mu * jnp.conj(mu)) + jnp.real(sub * jnp.conj(sub))).astype(t.dtype)
        c, s = mu / r, sub / r
        g = jnp.stack([jnp.stack([jnp.conj(c), s]), jnp.stack([-s, c])])
        g_h = _conj_t(g)
        rows = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=0)
        t = lax.dynamic_update_slice_in_dim(t, jnp.where(index >= m - 1, g @ rows, rows), m - 1, axis=0)
        columns = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=1)
        columns = jnp.where(index[:, None] <= m, columns @ g_h, columns)
        t = lax.dynamic_update_slice_in_dim(t, columns, m - 1, axis=1)
        z = lax.dynamic_update_slice_in_dim(z, lax.dynamic_slice_in_dim(z, m - 1, 2, axis=1) @ g_h, m - 1,
                                            axis=1)
        return t, z

    def step(i: Any, tz: tuple[Any, Any]) -> tuple[Any, Any]:
        t, z = tz
        m = n - i
        coupled = jnp.abs(t[m, m - 1]) > eps * (jnp.abs(t[m - 1, m - 1]) + jnp.abs(t[m, m]))
        t, z = lax.cond(coupled, rotate, lambda m, t, z: (t, z), m, t, z)
        return t.at[m, m - 1].set(0), z

    return lax.fori_loop(1, n, step, (t, z))


def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Any, Any]:  # noqa: N803
    """The complex Schur form (T upper triangular, Z unitary) of a real Schur form ``T, Z``;
    batch dimensions broadcast."""
    del check_finite  # unused, as in jax
    t, z = jnp.asarray(T), jnp.asarray(Z)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if z.ndim < 2 or z.shape[-1] != z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if t.shape[-1] != z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {z.shape} vs. T: {t.shape}")
    t, z = promote_dtypes(t, z, adjust=to_complex_dtype)
    return vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(t, z)


def _sqrtm_triangular(t: Any) -> Any:
    """The upper triangular square root U (U @ U = T) of an upper triangular T."""
    n = t.shape[0]
    d = jnp.sqrt(jnp.diagonal(t))
    index = jnp.arange(n)

    def column(j: Any, u: Any) -> Any:
        def entry(k: Any, u: Any) -> Any:
            i = j - 1 - k  # upwards: U_ij needs U_kj for i < k < j
            between = (index > i) & (index < j)
            s = jnp.sum(jnp.where(between, u[i, :] * u[:, j], 0))
            value = jnp.where(t[i, j] == s, 0, (t[i, j] - s) / (d[i] + d[j]))
            return u.at[i, j].set(value)

        return lax.fori_loop(0, j, entry, u)

    return lax.fori_loop(0, n, column, jnp.diag(d))


def sqrtm(A: Any, blocksize: int = 1) -> Any:  # noqa: N803
    """The principal square root of a square matrix (complex, as jax's)."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    a = jnp.asarray(A)
    if a.ndim != 2:
        raise ValueError(f"mlax.scipy.linalg.sqrtm: expected a square matrix, got shape {a.shape} (as jax's "
                         "sqrtm, batches are not supported)")
    t, z = schur(a, output="complex")
    return lax.dot(lax.dot(z, _sqrtm_triangular(t)), _conj_t(z))


def _parlett(f: Any, t: Any) -> tuple[Any, Any]:
    """Golub and Van Loan's algorithm 11.1.1: the strict upper triangle of f(T) from its diagonal
    ``f`` (superdiagonal by superdiagonal), and the smallest |T_jj - T_ii| divided by."""
    n = t.shape[0]
    index = jnp.arange(n)

    def superdiagonal(p: Any, state: tuple[Any, Any]) -> tuple[Any, Any]:
        def entry(i: Any, state: tuple[Any, Any]) -> tuple[Any, Any]:
            f, smallest = state
            j = i + p
            between = (index > i) & (index < j)
            t_row, t_col, f_row, f_col = (jnp.where(between, v, 0)
                                          for v in (t[i, :], t[:, j], f[i, :], f[:, j]))
            s = t[i, j] * (f[j, j] - f[i, i]) + (t_row @ f_col - f_row @ t_col)
            den = t[j, j] - t[i, i]
            s = jnp.where(den != 0, s / den, s)
            return f.at[i, j].set(s), jnp.minimum(smallest, jnp.abs(den))

        return lax.fori_loop(0, n - p, entry, state)

    return lax.fori_loop(1, n, superdiagonal, (f, jnp.abs(t[0, 0])))


def funm(A: Any, func: Callable[[Any], Any], disp: bool = True) -> Any:  # noqa: N803
    """f(A) for a scalar function ``func`` applied to the eigenvalues of A (complex, as jax's);
    with ``disp=False`` also jax's estimate of the relative error."""
    a = jnp.asarray(A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected square array_like input")
    t, z = rsf2csf(*schur(a))
    f = jnp.diag(func(jnp.diagonal(t))).astype(t.dtype)
    f, smallest = _parlett(f, t)
    f = z @ f @ _conj_t(z)
    if disp:
        return f
    tol = np.finfo(np.float32 if f.dtype == np.complex64 else np.float64).eps
    smallest = jnp.where(smallest == 0.0, tol, smallest)
    bound = jnp.minimum(1, jnp.maximum(tol, (tol / smallest) * jnp.linalg.norm(jnp.triu(t, 1), 1)))
    return f, jnp.where(jnp.any(jnp.isinf(f)), np.inf, bound)


def _solve_triangular_sylvester(r: Any, s_h: Any, f: Any) -> Any:
    """Y with R Y + Y S^H = F, R upper and S^H lower triangular: row i (from the last) solves
    y (R_ii I + S^H) = F_i - R_i Y, whose rows below i are known and whose others are still 0."""
    m, n = f.shape
    identity = jnp.eye(n, dtype=f.dtype)

    def row(k: Any, y: Any) -> Any:
        i = m - 1 - k
        rhs = lax.dynamic_slice_in_dim(f, i, 1, axis=0) - lax.dynamic_slice_in_dim(r, i, 1, axis=0) @ y
        shifted = s_h + r[i, i] * identity
        solved = lax_linalg.triangular_solve(shifted, rhs, left_side=False, lower=True)
        return lax.dynamic_update_slice_in_dim(y, solved, i, axis=0)

    return lax.fori_loop(0, m, row, jnp.zeros_like(f))


def _solve_sylvester_2d(a: Any, b: Any, c: Any, *, method: str, tol: float) -> Any:
    if method == "schur":
        r, u = schur(a, output="complex")
        s, v = schur(_conj_t(b), output="complex")
        y = _solve_triangular_sylvester(r, _conj_t(s), _conj_t(u) @ c.astype(r.dtype) @ v)
        x = u @ y @ _conj_t(v)
    elif method == "eigen":
        wa, va = jnp.linalg.eig(a)
        wb, vb = jnp.linalg.eig(b)
        y = jnp.linalg.solve(va, c.astype(wa.dtype) @ vb) / (wa[:, None] + wb[None, :])
        x = va @ y @ jnp.linalg.inv(vb)
    else:
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either "schur" or '
                         '"eigen".')
    if not jnp.issubdtype(c.dtype, np.complexfloating):
        x = jnp.real(x)
    sums = jnp.linalg.eigvals(a)[:, None] + jnp.linalg.eigvals(b)[None, :]
    return jnp.where(jnp.any(jnp.abs(sums) < tol), jnp.full_like(x, np.nan), x)


def solve_sylvester(A: Any, B: Any, C: Any, *, method: str = "schur", tol: float = 1e-8) -> Any:  # noqa: N803
    """X with A X + X B = C (batch dimensions broadcast); NaN where A and -B share an eigenvalue
    (an eigenvalue sum of magnitude below ``tol``)."""
    a, b, c = promote_dtypes_inexact(jnp.asarray(A), jnp.asarray(B), jnp.asarray(C))
    m, n = c.shape[-2:]
    if a.shape[-2:] != (m, m) or b.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {a.shape}\nB: {b.shape}\n"
                         f"C: {c.shape}")

    def core(a: Any, b: Any, c: Any) -> Any:
        return _solve_sylvester_2d(a, b, c, method=method, tol=tol)

    return vectorize(core, signature="(m,m),(n,n),(m,n)->(m,n)")(a, b, c)
