"""The Hurwitz zeta function, polygamma and the Bernoulli numbers of mlax.scipy.special (as
jax.scipy.special). zeta's values are mlax.lax.zeta's; its derivative, as in jax, is that of
the Euler-Maclaurin expansion (differentiated by mlax.jvp), valid in both x and q.
"""

from __future__ import annotations

import math
import operator
from fractions import Fraction
from typing import Any

import ml_dtypes
import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.autodiff import jvp
from mlax.custom_derivatives import custom_jvp
from mlax.dtypes import canonicalize
from mlax.errors import user_error
from mlax.numpy.util import asarray, promote_args_inexact

__all__ = ["bernoulli", "polygamma", "zeta"]


def _bernoulli_numbers(n: int) -> list[Fraction]:
    """B_0 .. B_n exactly (B_1 = -1/2), by the recurrence sum_k C(m + 1, k) B_k = 0."""
    numbers = [Fraction(1)]
    for m in range(1, n + 1):
        numbers.append(-sum(math.comb(m + 1, k) * numbers[k] for k in range(m)) / (m + 1))
    return numbers


# (2j)! / B_2j for j = 1 .. 16: the Euler-Maclaurin tail's coefficients
_EULER_MACLAURIN = tuple(float(math.factorial(2 * j) / b)
                         for j, b in enumerate(_bernoulli_numbers(32)[2::2], start=1))


def _zeta_series(x: Any, q: Any) -> Any:
    """zeta(x, q) by N terms of the series, the integral of the rest and M Euler-Maclaurin
    terms (N = M = 8 in float32, 16 otherwise): smooth in both arguments."""
    dtype = q.dtype
    n = 8 if dtype == np.float32 else 16
    x_, q_ = mnp.expand_dims(x, -1), mnp.expand_dims(q, -1)
    ks = np.arange(n, dtype=dtype)
    head = mnp.sum((q_ + ks) ** (-x_), -1)
    end = q + np.array(n, dtype)
    integral = lax.div(end ** (np.array(1, dtype) - x), x - np.array(1, dtype))
    ratios = (x_ + np.arange(2 * n, dtype=dtype)) / mnp.expand_dims(end, -1)
    terms = mnp.clip(mnp.cumprod(ratios, -1)[..., ::2], max=ml_dtypes.finfo(dtype).max)
    terms = terms / np.array(_EULER_MACLAURIN[:n], dtype)
    return head + integral + end ** (-x) * (np.array(0.5, dtype) + terms.sum(-1))


@custom_jvp
def _zeta(x: Any, q: Any) -> Any:
    return lax.zeta(x, q)


@_zeta.defjvp
def _zeta_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    return _zeta(*primals), jvp(_zeta_series, primals, tangents)[1]


def zeta(x: Any, q: Any = None) -> Any:
    """The Hurwitz zeta function ``sum_n (q + n)^-x`` (the Riemann one, q = None, is not
    implemented, as in jax)."""
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None to compute the "
                                  "Hurwitz Zeta function.")
    return _zeta(*promote_args_inexact("zeta", x, q))


def polygamma(n: Any, x: Any) -> Any:
    """The n-th derivative of digamma, for integer n."""
    dtype = asarray(n).dtype
    if dtype.kind not in "iu":
        raise user_error(ValueError, f"Argument `n` to polygamma must be of integer type. Got dtype {dtype}.",
                         "n of mlax.scipy.special.polygamma")
    return lax.polygamma(*promote_args_inexact("polygamma", n, x))


def bernoulli(n: int) -> Any:
    """The Bernoulli numbers B_0 .. B_n (B_1 = -1/2) in the default float dtype, as jax's:
    the even ones from the zeta series ``B_2k = (-1)^(k+1) 2 (2k)! zeta(2k) / (2 pi)^2k``."""
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    first = mnp.array([1, -1 / 2, 1 / 6])
    if n < 3:
        return first[:n + 1]
    dtype = canonicalize(np.dtype(np.float64))
    m = mnp.arange(4, n + 1, 2, dtype=dtype)
    ratio = mnp.cumprod(-(m - 1) * m / 4 / np.pi ** 2)
    k = mnp.arange(2, 50, dtype=dtype)
    zeta_minus_one = mnp.sum(k[:, None] ** (-m[None, :]), axis=0)
    return mnp.zeros(n + 1).at[:3].set(first).at[4::2].set(1.0 / np.pi ** 2 * ratio * (1 + zeta_minus_one))
