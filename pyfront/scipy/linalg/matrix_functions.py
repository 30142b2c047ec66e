"""mlax.scipy.linalg's matrix exponential, ported from jax/_src/scipy/linalg.py so that values and
derivatives are jax's:

- expm: scaling and squaring with a Pade approximant (Higham 2005). The degree (3, 5, 7, 9, 13 in
  float64; 3, 5, 7 in float32) is picked from the 1-norm by ``lax.switch``, the squarings are a
  ``lax.scan`` of ``max_squarings`` steps each squaring under ``lax.cond`` while the step is below
  the number needed, and a matrix needing more than ``max_squarings`` gives NaN (``lax.cond``).
  As in jax, there is no custom rule: derivatives come from differentiating these steps (the
  solve of the Pade quotient differentiates through its linear system).
- expm_frechet: the derivative of expm at ``A`` in the direction ``E``, which jax computes as
  ``jvp(expm, (A,), (E,))``: the same here, so expm_frechet and the derivative of expm agree.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from mlax import lax
from mlax.autodiff import jvp
from mlax.numpy import elementwise as ew
from mlax.numpy.creation import arange, eye, full_like
from mlax.numpy.differences import _promote_inexact
from mlax.numpy.histograms import digitize
from mlax.numpy.linalg_decompositions import solve
from mlax.numpy.norms import norm
from mlax.numpy.products import matmul
from mlax.numpy.util import asarray
from mlax.numpy.vectorize import vectorize
from mlax.scipy.linalg.decompositions import solve_triangular

__all__ = ["expm", "expm_frechet"]

# Pade numerator coefficients b_0..b_m (the denominator's are the same with alternating signs).
_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880., 3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
         10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.),
}

# Per precision: the largest 1-norm the top degree handles unscaled, the 1-norm bounds between
# degrees (Higham's theta_m), and the degrees.
_DOUBLE = (5.371920351148152, (1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
                               2.097847961257068e+000), (3, 5, 7, 9, 13))
_SINGLE = (3.925724783138660, (4.258730016922831e-001, 1.880152677804762e+000), (3, 5, 7))
_SCHEMES = {np.dtype(np.float64): _DOUBLE, np.dtype(np.complex128): _DOUBLE,
            np.dtype(np.float32): _SINGLE, np.dtype(np.complex64): _SINGLE}


def _pade(degree: int, a: Any) -> tuple[Any, Any]:
    """The odd part U and the even part V of the degree-``degree`` Pade numerator of exp(a), in
    jax's order of products (p = U + V, q = -U + V)."""
    b = _PADE[degree]
    ident = eye(a.shape[0], dtype=a.dtype)
    a2 = matmul(a, a)
    powers = [ident, a2]  # the even powers A^0, A^2 ... up to A^8 (degree 9), A^6 (degree 13)
    for k in range(2, (3 if degree == 13 else degree // 2) + 1):
        powers.append(matmul(a2, a2) if k == 2 else matmul(powers[k - 1], a2))
    if degree == 13:
        a4, a6 = powers[2], powers[3]
        u = matmul(a, matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
                   + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
        v = matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident
        return u, v
    half = degree // 2
    odd, even = b[2 * half + 1] * powers[half], b[2 * half] * powers[half]
    for k in range(half - 1, -1, -1):  # highest power first, as jax writes the sums
        odd, even = odd + b[2 * k + 1] * powers[k], even + b[2 * k] * powers[k]
    return matmul(a, odd), even


def _calc_p_q(a: Any) -> tuple[Any, Any, Any]:
    """The Pade numerator and denominator of exp(a / 2^s) and the number of squarings s."""
    if a.dtype not in _SCHEMES:
        raise TypeError(f"A.dtype={a.dtype} is not supported.")
    maxnorm, bounds, degrees = _SCHEMES[a.dtype]
    a_l1 = norm(a, 1)
    n_squarings = ew.maximum(0, ew.floor(ew.log2(a_l1 / maxnorm)))
    a = a / 2 ** n_squarings.astype(a.dtype)
    index = digitize(a_l1, asarray(np.array(bounds, a_l1.dtype)))
    u, v = lax.switch(index, [functools.partial(_pade, degree) for degree in degrees], a)
    return u + v, -u + v, n_squarings


def _squaring(r: Any, n_squarings: Any, max_squarings: int) -> Any:
    """``r`` squared ``n_squarings`` times, as a scan of ``max_squarings`` conditional steps."""
    def step(c: Any, i: Any) -> tuple[Any, None]:
        return lax.cond(i < n_squarings, lambda x: matmul(x, x), lambda x: x, c), None

    out, _ = lax.scan(step, r, arange(max_squarings, dtype=n_squarings.dtype))
    return out


def _expm(a: Any, upper_triangular: bool, max_squarings: int) -> Any:
    p, q, n_squarings = _calc_p_q(a)

    def compute(a: Any, p: Any, q: Any) -> Any:
        r = solve_triangular(q, p) if upper_triangular else solve(q, p)
        return _squaring(r, n_squarings, max_squarings)

    return lax.cond(n_squarings > max_squarings, lambda a, p, q: full_like(a, np.nan), compute, a, p, q)


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:  # noqa: N803 (scipy's name)
    """The matrix exponential of each square matrix of ``A`` (..., n, n); ``upper_triangular``
    solves the Pade quotient by back substitution; NaN where more than ``max_squarings``
    squarings would be needed."""
    (a,) = _promote_inexact(asarray(A))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={a.shape}.")
    fn = functools.partial(_expm, upper_triangular=upper_triangular, max_squarings=int(max_squarings))
    return fn(a) if a.ndim == 2 else vectorize(fn, signature="(n,n)->(n,n)")(a)


def expm_frechet(A: Any, E: Any, *, method: str | None = None,  # noqa: N803 (scipy's names)
                 compute_expm: bool = True) -> Any:
    """The Frechet derivative of expm at ``A`` in the direction ``E`` (and ``expm(A)`` first when
    ``compute_expm``): the forward-mode derivative of expm, as jax. ``method`` ('SPS',
    'blockEnlarge' in SciPy) is ignored, as jax ignores it."""
    a, e = asarray(A), asarray(E)
    if a.ndim < 2 or a.shape[-2] != a.shape[-1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={a.shape}")
    if e.ndim < 2 or e.shape[-2] != e.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={e.shape}")
    if a.shape != e.shape:
        raise ValueError(f"expected A and E to be the same shape, got A.shape={a.shape} E.shape={e.shape}")
    expm_a, frechet = jvp(functools.partial(expm, upper_triangular=False, max_squarings=16), (a,), (e,))
    return (expm_a, frechet) if compute_expm else frechet
