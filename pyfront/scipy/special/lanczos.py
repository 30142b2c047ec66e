"""gammaln and digamma by the Lanczos approximation, step for step as XLA expands jax's
``lax.lgamma`` / ``lax.digamma`` (the CHLO decompositions: g = 7, eight coefficients, Euler's
reflection below 1/2), so values agree with jax within a few ulp. mlax has no lgamma
primitive; these are composed from mlax.lax ops. Half floats compute in float32, as XLA does.
``mlax.random.poisson`` needs gammaln, the gamma sampler's gradient needs both.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact

__all__ = ["digamma", "gammaln"]

_G = 7.0
_BASE = 0.99999999999980993227684700473478
_COEFFICIENTS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
                 771.3234287776530788486528258894, -176.61502916214059906584551354,
                 12.507343278686904814458936853, -0.13857109526572011689554707,
                 9.984369578019570859563e-6, 1.50563273514931155834e-7)


def _widened(body: Callable[[Any, Callable[[float], Any]], Any]) -> Callable[[Any], Any]:
    """``body(x, c)`` on x widened to float32 when it is a half float (``c`` makes constants of
    the working dtype), rounded back to x's dtype and weak type (as jax's primitives keep it)."""

    def fn(x: Any) -> Any:
        dtype, weak = x.dtype, x.weak_type
        if dtype.itemsize == 2:
            x = lax.convert_element_type(x, np.float32)
        work = x.dtype

        def c(value: float) -> Any:
            return np.array(value, work)

        return lax.convert_element_type(body(x, c), dtype, weak)

    return fn


def _reflected_z(x: Any, c: Callable[[float], Any]) -> tuple[Any, Any]:
    """Whether x < 1/2 (reflect), and z = -x there, x - 1 elsewhere."""
    reflect = lax.lt(x, c(0.5))
    return reflect, lax.select(reflect, lax.neg(x), lax.sub(x, c(1)))


def _log_t(z: Any, c: Callable[[float], Any]) -> tuple[Any, Any]:
    """t = g + 1/2 + z and log(t), the latter as log(g + 1/2) + log1p(z / (g + 1/2))."""
    t = lax.add(c(_G + 0.5), z)
    return t, lax.add(c(math.log(_G + 0.5)), lax.log1p(lax.div(z, c(_G + 0.5))))


def _lgamma(x: Any, c: Callable[[float], Any]) -> Any:
    reflect, z = _reflected_z(x, c)
    a = c(_BASE)
    for i, coefficient in enumerate(_COEFFICIENTS):
        a = lax.add(a, lax.div(c(coefficient), lax.add(z, c(i + 1))))
    t, log_t = _log_t(z, c)
    r = lax.mul(lax.sub(lax.add(z, c(0.5)), lax.div(t, log_t)), log_t)
    value = lax.add(lax.add(c((math.log(2) + math.log(math.pi)) / 2), r), lax.log(a))
    # reflection: log(pi) - lgamma(1 - x) - log|sin(pi frac|x|)|, frac folded into [0, 1/2]
    ax = lax.abs(x)
    frac = lax.sub(ax, lax.floor(ax))
    frac = lax.select(lax.lt(c(0.5), frac), lax.sub(c(1), frac), frac)
    denom = lax.log(lax.sin(lax.mul(c(math.pi), frac)))
    reflection = lax.select(lax.is_finite(denom), lax.sub(lax.sub(c(math.log(math.pi)), denom), value),
                            lax.neg(denom))
    value = lax.select(reflect, reflection, value)
    return lax.select(lax.eq(lax.abs(x), c(np.inf)), mnp.full_like(x, np.inf), value)


def _digamma(x: Any, c: Callable[[float], Any]) -> Any:
    reflect, z = _reflected_z(x, c)
    num, denom = mnp.zeros_like(x), c(_BASE)
    for i, coefficient in enumerate(_COEFFICIENTS):
        zi = lax.add(z, c(i + 1))
        num = lax.sub(num, lax.div(c(coefficient), lax.mul(zi, zi)))
        denom = lax.add(denom, lax.div(c(coefficient), zi))
    t, log_t = _log_t(z, c)
    value = lax.sub(lax.add(log_t, lax.div(num, denom)), lax.div(c(_G), t))
    # reflection: digamma(1 - x) - pi cot(pi x), x shifted into [-1/2, 1/2] first
    reduced = lax.add(x, lax.abs(lax.floor(lax.add(x, c(0.5)))))
    angle = lax.mul(c(math.pi), reduced)
    reflection = lax.sub(value, lax.div(lax.mul(c(math.pi), lax.cos(angle)), lax.sin(angle)))
    value = lax.select(reflect, reflection, value)
    pole = lax.bitwise_and(lax.le(x, c(0)), lax.eq(x, lax.floor(x)))
    return lax.select(pole, mnp.full_like(x, np.nan), value)


_lgamma_fn = _widened(_lgamma)
_digamma_fn = _widened(_digamma)


def gammaln(x: Any) -> Any:
    """``log|Gamma(x)|`` (as jax.scipy.special.gammaln)."""
    (x,) = promote_args_inexact("gammaln", x)
    return _lgamma_fn(x)


def digamma(x: Any) -> Any:
    """The logarithmic derivative of the gamma function (NaN at its poles 0, -1, -2, ...)."""
    (x,) = promote_args_inexact("digamma", x)
    return _digamma_fn(x)
