"""`mlax.numpy.linalg`'s functions on the LU and Cholesky primitives: cholesky, solve, inv, det,
slogdet, ported from jax/_src/numpy/linalg.py so that values and derivatives are jax's:

- solve is an LU solve of the stopped-gradient matrix whose derivative goes through the linear
  system (`linear_system`: the derivative jax's custom_linear_solve gives, written as a
  custom JVP whose rule takes the factors as arguments, as mlax's custom rules must), on the
  broadcast batch at once.
- slogdet reads the LU's diagonal and pivots (sign from the parity of the row swaps and the
  negative diagonal entries; -inf and sign 0 for a singular matrix) under a custom JVP
  d log|det A| = trace(A^-1 dA), sign' = 0; 1x1 and 2x2 matrices use closed forms.
- det is sign * exp(logdet) (closed forms for 2x2 and 3x3) under jax's custom JVP through the
  cofactor solve, well defined for matrices of rank n-1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from mlax import lax
from mlax.batching import vmap
from mlax.custom_derivatives import custom_jvp
from mlax.lax import decompositions as lax_linalg
from mlax.lax import decompositions_spectral as lax_spectral
from mlax.lax.transforms import stop_gradient
from mlax.numpy import elementwise as ew
from mlax.numpy import reductions as red
from mlax.numpy.complex_numbers import real
from mlax.numpy.creation import arange, eye, ones, zeros_like
from mlax.numpy.differences import _promote_inexact
from mlax.numpy.manipulation import broadcast_to, concatenate, diagonal, swapaxes
from mlax.numpy.math_extra import isinf, isnan, where
from mlax.numpy.products import matmul, trace
from mlax.numpy.util import check_arraylike


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


def _inexact(fname: str, *xs: Any) -> list[Any]:
    check_arraylike(fname, *xs)
    return _promote_inexact(*xs)


def _square(fname: str, a: Any) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to {fname} must have shape [..., n, n], got {a.shape}")


def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Any:
    """The lower (or ``upper``) Cholesky factor of each matrix; NaN where not positive definite."""
    (a,) = _inexact("jnp.linalg.cholesky", a)
    factor = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return swapaxes(factor, -1, -2) if upper else factor


# --- LU solves (jax's lax.linalg.lu_solve / _solve) -----------------------------------------------


def _lu_solve_core(lu: Any, permutation: Any, b: Any, trans: int) -> Any:
    m = lu.shape[0]
    x = b.reshape(m, int(np.prod(b.shape[1:])))
    if trans == 0:
        x = x[permutation, :]
        x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
        x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    elif trans in (1, 2):
        x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False, transpose_a=True,
                                        conjugate_a=trans == 2)
        x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True,
                                        transpose_a=True, conjugate_a=trans == 2)
        _, inverse = lax.sort_key_val(permutation, lax.iota(np.int32, permutation.shape[0]))
        x = x[inverse, :]
    else:
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    return x.reshape(b.shape)


def lu_solve(lu: Any, permutation: Any, b: Any, trans: int = 0) -> Any:
    """Solve with an LU factorization and its permutation, broadcasting batch dimensions (b a
    vector when it has one dimension less than ``lu``)."""
    if lu.ndim < 2 or lu.shape[-1] != lu.shape[-2]:
        raise ValueError(f"last two dimensions of LU decomposition must be equal, got shape {lu.shape}")
    if b.ndim < 1:
        raise ValueError(f"b matrix must have rank >= 1, got shape {b.shape}")
    vector = lu.ndim == b.ndim + 1
    if vector:
        b = b[..., None]
    batch = np.broadcast_shapes(lu.shape[:-2], permutation.shape[:-1], b.shape[:-2])
    lu = broadcast_to(lu, (*batch, *lu.shape[-2:]))
    permutation = broadcast_to(permutation, (*batch, permutation.shape[-1]))
    b = broadcast_to(b, (*batch, *b.shape[-2:]))
    fn = lambda lu, p, b: _lu_solve_core(lu, p, b, trans)  # noqa: E731
    for _ in batch:
        fn = vmap(fn)
    x = fn(lu, permutation, b)
    return x[..., 0] if vector else x


def check_solve_shapes(a: Any, b: Any) -> None:
    square = a.ndim >= 2 and a.shape[-1] == a.shape[-2]
    if not (square and b.ndim in (a.ndim, a.ndim - 1) and a.shape[-1] == b.shape[a.ndim - 2]):
        raise ValueError("The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] or "
                         f"b=[..., m]; got a={a.shape} and b={b.shape}")


def linear_system(factor: Callable[[Any], Any], solve: Callable[[Any, Any], Any]) -> Any:
    """``f(a, b) = solve(factor(a), b)`` for one matrix ``a`` and a vector or matrix ``b``, whose
    derivative goes through the linear system and never through the factorization (what
    jax's custom_linear_solve gives): x' = solve(factors, b' - a' x), linear in the tangents,
    so reverse mode transposes the solve."""

    @custom_jvp
    def system(a: Any, b: Any) -> Any:
        return solve(factor(stop_gradient(a)), b)

    @system.defjvp
    def system_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
        (a, b), (da, db) = primals, tangents
        factors = factor(stop_gradient(a))
        x = solve(factors, b)
        change = matmul(da, x) if x.ndim == a.ndim else matmul(da, x[..., None])[..., 0]
        return x, solve(factors, db - change)

    return system


def broadcast_systems(a: Any, b: Any) -> tuple[Any, Any]:
    """``a`` and ``b`` broadcast to one batch: b one vector when it has one dimension, else a batch
    of matrices (jnp.linalg.solve's signatures). The systems are solved batched rather than
    under vmap, so that their custom derivative survives batching."""
    if a.shape[-1] != a.shape[-2] or b.shape[-1 if b.ndim == 1 else -2] != a.shape[-1]:
        raise ValueError(f"solve: a must be square matrices [..., m, m] and b [m] or [..., m, n], got "
                         f"a={a.shape} and b={b.shape}")
    if b.ndim == 1:
        return a, broadcast_to(b, (*a.shape[:-1],))
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return broadcast_to(a, (*batch, *a.shape[-2:])), broadcast_to(b, (*batch, *b.shape[-2:]))


def _lu_factors(a: Any) -> tuple[Any, Any]:
    lu, _, permutation = lax_linalg.lu(a)
    return lu, permutation


_lu_system = linear_system(_lu_factors, lambda factors, b: lu_solve(*factors, b))


def solve(a: Any, b: Any) -> Any:
    """x with ``a @ x == b`` (b a vector or a batch of matrices), through an LU factorization."""
    a, b = _inexact("jnp.linalg.solve", a, b)
    if a.ndim < 2:
        raise ValueError(f"left hand array must be at least two dimensional; got a.shape={a.shape}")
    if b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1] and a.shape[-1] != b.shape[-2]:
        raise ValueError(f"Invalid shapes for solve: {a.shape}, {b.shape}. Prior to JAX v0.5.0, this would "
                         "have been treated as a batched 1-dimensional solve. To recover this behavior, use "
                         "solve(a, b[..., None]).squeeze(-1).")
    return _lu_system(*broadcast_systems(a, b))


def inv(a: Any) -> Any:
    """The inverse of each square matrix (a solve against the identity)."""
    check_arraylike("jnp.linalg.inv", a)
    (a,) = _promote_inexact(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {a.shape}.")
    return solve(a, broadcast_to(eye(a.shape[-1], dtype=a.dtype), a.shape))


# --- determinants ---------------------------------------------------------------------------------


def _parity(pivots: Any) -> Any:
    """How many row swaps the pivots make (a pivot that is not its own row)."""
    return red.count_nonzero(pivots != arange(pivots.shape[-1], dtype=pivots.dtype), axis=-1)


def _slogdet_closed_form(a: Any) -> tuple[Any, Any]:
    """1x1 and 2x2 determinants without a factorization."""
    det = a[..., 0, 0] if a.shape[-1] == 1 else a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    return ew.sign(det), ew.log(ew.abs(det))


def _slogdet_lu(a: Any) -> tuple[Any, Any]:
    lu, pivots, _ = lax_linalg.lu(a)
    diag = diagonal(lu, axis1=-2, axis2=-1)
    singular = red.any(diag == 0, axis=-1)
    parity = _parity(pivots)
    if np.iscomplexobj(diag):  # the phase of the product of U's diagonal
        phase = red.prod(diag / ew.abs(diag).astype(diag.dtype), axis=-1)
    else:
        phase = np.array(1, a.dtype)
        parity = parity + red.count_nonzero(diag < 0, axis=-1)
    sign = where(singular, np.array(0, a.dtype), phase * (-2 * (parity % 2) + 1).astype(a.dtype))
    log_abs = red.sum(ew.log(ew.abs(diag)), axis=-1)
    return sign, where(singular, np.array(-np.inf, log_abs.dtype), log_abs)


def _slogdet_tangent(x: Any, g: Any) -> Any:
    if x.shape[-1] == 1:
        return g[..., 0, 0] / x[..., 0, 0]
    if x.shape[-1] == 2:
        det = x[..., 0, 0] * x[..., 1, 1] - x[..., 0, 1] * x[..., 1, 0]
        return (g[..., 0, 0] * x[..., 1, 1] - g[..., 0, 1] * x[..., 1, 0] - g[..., 1, 0] * x[..., 0, 1]
                + g[..., 1, 1] * x[..., 0, 0]) / det
    return trace(solve(x, g), axis1=-1, axis2=-2)


@custom_jvp
def _slogdet(a: Any) -> tuple[Any, Any]:
    return _slogdet_closed_form(a) if a.shape[-1] <= 2 else _slogdet_lu(a)


@_slogdet.defjvp
def _slogdet_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    (x,), (g,) = primals, tangents
    sign, ans = _slogdet(x)
    ans_dot = _slogdet_tangent(x, g)
    if not np.iscomplexobj(ans_dot):
        return (sign, ans), (zeros_like(sign), ans_dot)
    real_dot = real(ans_dot)  # d log|det| is the real part; the sign turns by the imaginary one
    return (sign, ans), ((ans_dot - real_dot.astype(ans_dot.dtype)) * sign, real_dot)


def _slogdet_by_qr(a: Any) -> tuple[Any, Any]:
    """slogdet by QR (jax's `_slogdet_qr`) under slogdet's custom JVP."""
    if np.issubdtype(a.dtype, np.complexfloating):
        raise NotImplementedError("slogdet method='qr' not implemented for complex inputs")
    return _slogdet_qr(a)


@custom_jvp
def _slogdet_qr(a: Any) -> tuple[Any, Any]:
    q, r = lax_spectral.qr(a, full_matrices=False)
    r_diag = diagonal(r, axis1=-2, axis2=-1)
    log_abs_det = red.sum(ew.log(ew.abs(r_diag)), axis=-1)
    sign_q = _slogdet_lu(q)[0] if a.shape[-1] > 0 else red.prod(r_diag, axis=-1)
    return red.prod(ew.sign(r_diag), axis=-1) * sign_q, log_abs_det


@_slogdet_qr.defjvp
def _slogdet_qr_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    (x,), (g,) = primals, tangents
    sign, ans = _slogdet_qr(x)
    return (sign, ans), (ew.multiply(sign, 0), _slogdet_tangent(x, g))


def slogdet(a: Any, *, method: str | None = None) -> SlogdetResult:
    """The sign and log |det| of each square matrix (through LU)."""
    (a,) = _inexact("jnp.linalg.slogdet", a)
    _square("slogdet()", a)
    if method == "qr":
        return SlogdetResult(*_slogdet_by_qr(a))
    if method not in (None, "lu"):
        raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), and 'qr'.")
    return SlogdetResult(*_slogdet(a))


def _cofactor_solve(a: Any, b: Any) -> tuple[Any, Any]:
    """det(a) and adjugate(a) @ b, finite for matrices of rank n-1 (jax's _cofactor_solve)."""
    if a.shape[-1] == 1:
        return a[..., 0, 0], b
    lu, pivots, permutation = lax_linalg.lu(a)
    batch = np.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    x = broadcast_to(b, (*batch, *b.shape[-2:]))
    lu = broadcast_to(lu, (*batch, *lu.shape[-2:]))
    diag = diagonal(lu, axis1=-2, axis2=-1)
    sign = (-2 * (_parity(pivots) % 2) + 1).astype(a.dtype)
    partial_det = red.cumprod(diag, axis=-1) * sign[..., None]
    lu = lu.at[..., -1, -1].set(1.0 / partial_det[..., -2])
    permutation = broadcast_to(permutation, (*batch, a.shape[-1]))
    d = lax_linalg.triangular_solve(lu, ones(x.shape[:-1], x.dtype), left_side=True, lower=False)
    bad = red.any(ew.logical_or(isnan(d), isinf(d)), axis=-1)[..., None, None]
    x = where(bad, zeros_like(x), x)
    x = lax.apply_permutation(x, broadcast_to(permutation[..., None], x.shape), x.ndim - 2)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    x = concatenate((x[..., :-1, :] * partial_det[..., -1, None, None], x[..., -1:, :]), axis=-2)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    return partial_det[..., -1], where(bad, zeros_like(x), x)


def _det_closed_form(a: Any) -> Any:
    """2x2 and 3x3 determinants, differentiated as they are written (as jax)."""
    if a.shape[-1] == 2:
        return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2] + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
            + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1] - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
            - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1] - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])


@custom_jvp
def _det(a: Any) -> Any:
    sign, logdet = _slogdet(a)
    return sign * ew.exp(logdet).astype(sign.dtype)


@_det.defjvp
def _det_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    (x,), (g,) = primals, tangents
    y, z = _cofactor_solve(x, g)
    return y, trace(z, axis1=-1, axis2=-2)


def det(a: Any) -> Any:
    """The determinant of each square matrix."""
    (a,) = _inexact("jnp.linalg.det", a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to _det() must have shape [..., n, n], got {a.shape}")
    return _det_closed_form(a) if a.shape[-1] in (2, 3) else _det(a)


__all__ = ["cholesky", "det", "inv", "slogdet", "solve"]
