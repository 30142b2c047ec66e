"""The standard normal CDF and its inverse (ndtr, log_ndtr, ndtri), as jax.scipy.special:
the same case splits and constants (erf near 0 and erfc in the tails for ndtr; Cephes'
rational approximations for ndtri; an asymptotic series far in the lower tail for log_ndtr),
so values agree with jax within a few ulp. ``mlax.scipy.stats.norm`` is built on these.
Only float32 and float64 are accepted, as in jax.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.custom_derivatives import custom_jvp
from mlax.errors import user_error
from mlax.numpy.util import asarray

__all__ = ["log_ndtr", "ndtr", "ndtri"]

# Cephes' ndtri coefficients: P0/Q0 for p > exp(-2), P1/Q1 and P2/Q2 in the tail (z < 8, z >= 8)
_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
       1.39312609387279679503E1, -1.23916583867381258016E0)
_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
       -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
       1.59056225126211695515E1, -1.18331621121330003142E0)
_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
       4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
       -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
       1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
       -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
       1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
       3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
       2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
       2.89247864745380683936E-6, 6.79019408009981274425E-9)

# log_ndtr's segments: above UPPER log(1 - q) ~ -q; below LOWER the asymptotic series
_SEGMENTS = {np.dtype(np.float32): (-10.0, 5.0), np.dtype(np.float64): (-20.0, 8.0)}


def _float_operand(name: str, x: Any) -> Any:
    x = asarray(x)
    if x.dtype not in _SEGMENTS:
        raise user_error(TypeError, f"x.dtype={x.dtype} is not supported, see docstring for supported types.",
                         f"x of mlax.scipy.special.{name}")
    return x


def _const(x: Any, value: float) -> Any:
    return np.array(value, x.dtype)


def _ndtr(x: Any) -> Any:
    half_sqrt_2 = _const(x, 0.5 * np.sqrt(np.array(2.0, x.dtype)))
    w = lax.mul(x, half_sqrt_2)
    z = lax.abs(w)
    tails = lax.select(lax.gt(w, _const(x, 0)), lax.sub(_const(x, 2), lax.erfc(z)), lax.erfc(z))
    y = lax.select(lax.lt(z, half_sqrt_2), lax.add(_const(x, 1), lax.erf(w)), tails)
    return lax.mul(_const(x, 0.5), y)


def ndtr(x: Any) -> Any:
    """The standard normal CDF, ``(1 + erf(x / sqrt 2)) / 2`` (erfc-based in the tails)."""
    return _ndtr(_float_operand("ndtr", x))


def _polyval(coefficients: tuple[float, ...], x: Any) -> Any:
    """Horner's rule from zero, as jnp.polyval."""
    y = mnp.zeros_like(x)
    for coefficient in coefficients:
        y = lax.add(lax.mul(y, x), _const(x, coefficient))
    return y


def ndtri(p: Any) -> Any:
    """The inverse of ndtr (-inf at 0, inf at 1, NaN outside [0, 1])."""
    p = _float_operand("ndtri", p)
    one, half = _const(p, 1), _const(p, 0.5)
    mcp = mnp.where(lax.gt(p, _const(p, -np.expm1(-2.0))), lax.sub(one, p), p)
    mcp = mnp.where(lax.eq(mcp, _const(p, 0)), mnp.full_like(p, 0.5), mcp)  # any value without NaNs
    w = lax.sub(mcp, half)
    ww = lax.mul(w, w)
    big = lax.add(w, lax.mul(lax.mul(w, ww), lax.div(_polyval(_P0, ww), _polyval(_Q0, ww))))
    big = lax.mul(big, lax.neg(_const(p, np.sqrt(2.0 * np.pi))))
    z = lax.sqrt(lax.mul(_const(p, -2), lax.log(mcp)))
    first = lax.sub(z, lax.div(lax.log(z), z))
    inv_z = lax.div(one, z)
    small = lax.sub(first, lax.div(lax.div(_polyval(_P2, inv_z), _polyval(_Q2, inv_z)), z))
    otherwise = lax.sub(first, lax.div(lax.div(_polyval(_P1, inv_z), _polyval(_Q1, inv_z)), z))
    tail = mnp.where(lax.ge(z, _const(p, 8)), small, otherwise)
    x = mnp.where(lax.gt(mcp, _const(p, np.exp(-2.0))), big, tail)
    x = mnp.where(lax.gt(p, _const(p, 1.0 - np.exp(-2.0))), x, lax.neg(x))
    return mnp.where(lax.eq(p, _const(p, 0)), mnp.full_like(p, -np.inf),
                     mnp.where(lax.eq(p, one), mnp.full_like(p, np.inf), x))


def _log_ndtr_lower(x: Any, series_order: int) -> Any:
    """``log(ndtr(x))`` for x far below 0: ``-x^2/2 - log(-x) - log(2 pi)/2`` plus the log of the
    asymptotic series ``1 + sum_n (-1)^n (2n-1)!! / x^(2n)``."""
    x2 = lax.mul(x, x)
    log_scale = lax.sub(lax.sub(lax.mul(_const(x, -0.5), x2), lax.log(lax.neg(x))),
                        _const(x, 0.5 * np.log(2.0 * np.pi)))
    if series_order <= 0:
        return lax.add(log_scale, lax.log(mnp.ones_like(x)))
    even, odd = mnp.zeros_like(x), mnp.zeros_like(x)
    x2n = x2
    for n in range(1, series_order + 1):
        term = lax.div(_const(x, math.prod(range(2 * n - 1, 1, -2))), x2n)
        if n % 2:
            odd = lax.add(odd, term)
        else:
            even = lax.add(even, term)
        x2n = lax.mul(x2n, x2)
    return lax.add(log_scale, lax.log(lax.sub(lax.add(_const(x, 1), even), odd)))


def _log_ndtr(x: Any, series_order: int) -> Any:
    lower, upper = (_const(x, bound) for bound in _SEGMENTS[x.dtype])
    above = lax.gt(x, upper)
    res = _ndtr(mnp.where(above, lax.neg(x), lax.max(x, lower)))
    lower_tail = _log_ndtr_lower(lax.min(x, lower), series_order)
    return mnp.where(above, lax.neg(res), mnp.where(lax.gt(x, lower), lax.log(res), lower_tail))


def _log_ndtr_jvp(series_order: int, primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    """d/dx log ndtr(x) = pdf(x) / ndtr(x), as exp(log pdf - log ndtr): finite in both tails."""
    (x,), (t,) = primals, tangents
    ans = _log_ndtr_custom(x, series_order)
    log_pdf = lax.sub(lax.mul(_const(x, -0.5), lax.mul(x, x)), _const(x, np.log(np.sqrt(2 * np.pi))))
    return ans, lax.mul(t, lax.exp(lax.sub(log_pdf, ans)))


def _log_ndtr_primal(x: Any, series_order: int) -> Any:
    return _log_ndtr(x, series_order)


_log_ndtr_custom = custom_jvp(_log_ndtr_primal, nondiff_argnums=(1,))
_log_ndtr_custom.defjvp(_log_ndtr_jvp)


def log_ndtr(x: Any, series_order: int = 3) -> Any:
    """``log(ndtr(x))``, accurate far into both tails (``series_order`` terms of the lower
    tail's asymptotic series, 0 to 30)."""
    if not isinstance(series_order, int):
        raise user_error(TypeError, "series_order must be a Python integer.",
                         "series_order of mlax.scipy.special.log_ndtr")
    if series_order < 0:
        raise user_error(ValueError, "series_order must be non-negative.",
                         "series_order of mlax.scipy.special.log_ndtr")
    if series_order > 30:
        raise user_error(ValueError, "series_order must be <= 30.",
                         "series_order of mlax.scipy.special.log_ndtr")
    return _log_ndtr_custom(_float_operand("log_ndtr", x), series_order)
