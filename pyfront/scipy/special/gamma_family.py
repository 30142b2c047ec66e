"""The gamma-function family of mlax.scipy.special (as jax.scipy.special): gammaln, gamma and
its sign, digamma, the beta function, the regularized incomplete gamma and beta functions,
factorial, comb, poch, multigammaln. Arguments are promoted together to an inexact dtype and
broadcast; the work is done by mlax.lax's special functions, with jax's formulas around them
(betaln as TOMS 708's algdiv for large arguments, ...).
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.custom_derivatives import custom_jvp
from mlax.numpy.util import promote_args_inexact

__all__ = ["beta", "betainc", "betaln", "comb", "digamma", "factorial", "gamma", "gammainc", "gammaincc",
           "gammaln", "gammasgn", "loggamma", "multigammaln", "poch"]


def _lax_unary(name: str, prim: str, doc: str) -> Any:
    def fn(x: Any) -> Any:
        (x,) = promote_args_inexact(name, x)
        return getattr(lax, prim)(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _lax_binary(name: str, prim: str, doc: str) -> Any:
    def fn(a: Any, x: Any) -> Any:
        return getattr(lax, prim)(*promote_args_inexact(name, a, x))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


gammaln = _lax_unary("gammaln", "lgamma", "``log|Gamma(x)|``.")
digamma = _lax_unary("digamma", "digamma", "The logarithmic derivative of the gamma function (NaN at its "
                     "poles 0, -1, -2, ...).")
gammainc = _lax_binary("gammainc", "igamma", "The regularized lower incomplete gamma function P(a, x).")
gammaincc = _lax_binary("gammaincc", "igammac", "The regularized upper incomplete gamma function "
                        "Q(a, x) = 1 - P(a, x).")


def gammasgn(x: Any) -> Any:
    """The sign of Gamma(x): -1 between the poles where it is negative and at -0, NaN at the
    poles and for NaN."""
    (x,) = promote_args_inexact("gammasgn", x)
    floor_x = lax.floor(x)
    negative = x < 0
    nan = (negative & (x == floor_x)) | mnp.isnan(x)
    minus = (negative & (mnp.remainder(floor_x, 2) != 0)) | ((x == 0) & mnp.signbit(x))
    return mnp.where(nan, np.array(np.nan, x.dtype), mnp.where(minus, np.array(-1, x.dtype),
                                                                 np.array(1, x.dtype)))


def loggamma(x: Any) -> Any:
    """The principal branch of log Gamma(x): gammaln for x > 0, NaN elsewhere (real inputs)."""
    (x,) = promote_args_inexact("loggamma", x)
    return mnp.where(x > 0, lax.lgamma(x), np.array(np.nan, x.dtype))


def gamma(x: Any) -> Any:
    """The gamma function, ``gammasgn(x) * exp(gammaln(x))``."""
    (x,) = promote_args_inexact("gamma", x)
    return gammasgn(x) * lax.exp(lax.lgamma(x))


# TOMS 708's algdiv: ln(Gamma(b) / Gamma(a + b)) for b >= 8
_ALGDIV = (0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03, -0.595202931351870e-03,
           0.837308034031215e-03, -0.165322962780713e-02)


def _algdiv(a: Any, b: Any) -> Any:
    h = a / b
    c = x = h / (1 + h)
    d = b + (a - 0.5)
    x2 = x * x
    s = [1.0 + (x + x2)]  # s3, s5, ..., s11
    for _ in range(4):
        s.append(1.0 + (x + x2 * s[-1]))
    t = (1.0 / b) ** 2
    w = _ALGDIV[5] * s[4] * t + _ALGDIV[4] * s[3]
    for coefficient, sn in zip(_ALGDIV[3:0:-1], s[2::-1], strict=True):
        w = w * t + coefficient * sn
    w = (w * t + _ALGDIV[0]) * (c / b)
    u = d * lax.log1p(a / b)
    v = a * (lax.log(b) - 1.0)
    return mnp.where(u <= v, (w - v) - u, (w - u) - v)


def betaln(a: Any, b: Any) -> Any:
    """``log|B(a, b)|``; for b >= 8 through algdiv, free of the cancellation of three lgammas."""
    a, b = promote_args_inexact("betaln", a, b)
    a, b = mnp.minimum(a, b), mnp.maximum(a, b)
    small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    large_b = lax.lgamma(a) + _algdiv(a, b)
    return mnp.where(b < 8, small_b, large_b)


def beta(a: Any, b: Any) -> Any:
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``."""
    a, b = promote_args_inexact("beta", a, b)
    return gammasgn(a) * gammasgn(b) * gammasgn(a + b) * lax.exp(betaln(a, b))


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function I_x(a, b)."""
    return lax.betainc(*promote_args_inexact("betainc", a, b, x))


def factorial(n: Any, exact: bool = False) -> Any:
    """``n!`` as ``Gamma(n + 1)`` (0 for n < 0); ``exact=True`` is not supported, as in jax."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = promote_args_inexact("factorial", n)
    return mnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


def comb(N: Any, k: Any, *, repetition: bool = False) -> Any:  # noqa: N803 (scipy's name)
    """N choose k through gammaln (0 outside 0 <= k <= N); with ``repetition``, with
    replacement."""
    N, k = promote_args_inexact("comb", N, k)
    if repetition:
        return mnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k))
    ok = (k <= N) & (N >= 0) & (k >= 0)
    safe_n, safe_k = mnp.where(ok, N, 0.0), mnp.where(ok, k, 0.0)
    value = lax.exp(lax.lgamma(safe_n + 1) - lax.lgamma(safe_k + 1) - lax.lgamma(safe_n + 1 - safe_k))
    return mnp.where(ok, value, 0.0)


@custom_jvp
def _poch(z: Any, m: Any) -> Any:
    return mnp.where(m == 0.0, np.array(1, z.dtype), gamma(z + m) / gamma(z))


@_poch.defjvp
def _poch_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    """d/dz = (digamma(z + m) - digamma(z)) poch, d/dm = digamma(z + m) poch, as jax."""
    (z, m), (tz, tm) = primals, tangents
    out = _poch(z, m)
    psi_zm = lax.digamma(z + m)
    return out, (psi_zm - lax.digamma(z)) * out * tz + psi_zm * out * tm


def poch(z: Any, m: Any) -> Any:
    """The rising factorial ``Gamma(z + m) / Gamma(z)`` (1 at m = 0)."""
    return _poch(*promote_args_inexact("poch", z, m))


def multigammaln(a: Any, d: Any) -> Any:
    """The log of the multivariate gamma function of dimension ``d`` (a static integer)."""
    d = operator.index(d)
    a, d_ = promote_args_inexact("multigammaln", a, d)
    constant = 0.25 * d_ * (d_ - 1) * np.array(math.log(math.pi), a.dtype)
    b = mnp.arange(d, dtype=d_.dtype) / 2
    res = mnp.sum(lax.lgamma(mnp.expand_dims(a, -1) - mnp.expand_dims(b, tuple(range(a.ndim)))), axis=-1)
    return res + constant
