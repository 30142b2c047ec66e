"""The gamma-function kernels behind mlax.lax.lgamma, digamma, igamma, igammac, igamma_grad_a
and random_gamma_grad, composed from mlax.lax primitives step for step as XLA expands jax's:

- lgamma and digamma: the CHLO decompositions, Lanczos' approximation (g = 7, eight
  coefficients) with Euler's reflection below 1/2;
- the regularized incomplete gamma P(a, x) and its derivatives: jax's lowering (Cephes'
  power series of P below x = max(1, a), Legendre's continued fraction of Q = 1 - P above),
  differentiated in a alongside for the derivative modes, iterated to float epsilon.

Each kernel takes operands of one float32/float64 dtype and shape (mlax.lax.special_functions
checks, broadcasts and widens half floats). The loops iterate until every element has
converged, each element frozen once it has (by select), so values are what a per-element loop
gives, as in jax.
"""

from __future__ import annotations

import enum
import math
from typing import Any

import ml_dtypes
import numpy as np

from mlax import lax

__all__ = ["digamma", "igamma", "igamma_grad_a", "igammac", "lgamma", "random_gamma_grad"]

_G = 7.0
_BASE = 0.99999999999980993227684700473478
_COEFFICIENTS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
                 771.3234287776530788486528258894, -176.61502916214059906584551354,
                 12.507343278686904814458936853, -0.13857109526572011689554707,
                 9.984369578019570859563e-6, 1.50563273514931155834e-7)


def k(x: Any, value: float) -> np.ndarray:
    """A rank-0 constant of x's dtype (lax broadcasts it)."""
    return np.array(value, x.dtype)


def full(x: Any, value: float) -> Any:
    """``value`` in x's shape and dtype."""
    return lax.broadcast_in_dim(k(x, value), x.shape, ())


def isnan(x: Any) -> Any:
    return lax.ne(x, x)


def any_of(*predicates: Any) -> Any:
    """Elementwise or of the predicates."""
    out = predicates[0]
    for p in predicates[1:]:
        out = lax.bitwise_or(out, p)
    return out


def reduce_any(predicate: Any) -> Any:
    return lax.reduce_or(predicate, tuple(range(predicate.ndim)))


def _reflected_z(x: Any) -> tuple[Any, Any]:
    """Whether x < 1/2 (reflect), and z = -x there, x - 1 elsewhere."""
    reflect = lax.lt(x, k(x, 0.5))
    return reflect, lax.select(reflect, lax.neg(x), lax.sub(x, k(x, 1)))


def _log_t(z: Any) -> tuple[Any, Any]:
    """t = g + 1/2 + z and log(t), the latter as log(g + 1/2) + log1p(z / (g + 1/2))."""
    t = lax.add(k(z, _G + 0.5), z)
    return t, lax.add(k(z, math.log(_G + 0.5)), lax.log1p(lax.div(z, k(z, _G + 0.5))))


def lgamma(x: Any) -> Any:
    """log|Gamma(x)|: Lanczos, reflected below 1/2; inf at the poles and at +-inf."""
    reflect, z = _reflected_z(x)
    a = full(x, _BASE)
    for i, coefficient in enumerate(_COEFFICIENTS):
        a = lax.add(a, lax.div(k(x, coefficient), lax.add(z, k(x, i + 1))))
    t, log_t = _log_t(z)
    r = lax.mul(lax.sub(lax.add(z, k(x, 0.5)), lax.div(t, log_t)), log_t)
    value = lax.add(lax.add(k(x, (math.log(2) + math.log(math.pi)) / 2), r), lax.log(a))
    # reflection: log(pi) - lgamma(1 - x) - log|sin(pi frac|x|)|, frac folded into [0, 1/2]
    ax = lax.abs(x)
    frac = lax.sub(ax, lax.floor(ax))
    frac = lax.select(lax.lt(k(x, 0.5), frac), lax.sub(k(x, 1), frac), frac)
    denom = lax.log(lax.sin(lax.mul(k(x, math.pi), frac)))
    reflection = lax.select(lax.is_finite(denom), lax.sub(lax.sub(k(x, math.log(math.pi)), denom), value),
                            lax.neg(denom))
    value = lax.select(reflect, reflection, value)
    return lax.select(lax.eq(ax, k(x, np.inf)), full(x, np.inf), value)


def digamma(x: Any) -> Any:
    """The logarithmic derivative of Gamma: Lanczos, reflected below 1/2; NaN at the poles."""
    reflect, z = _reflected_z(x)
    num, denom = full(x, 0), full(x, _BASE)
    for i, coefficient in enumerate(_COEFFICIENTS):
        zi = lax.add(z, k(x, i + 1))
        num = lax.sub(num, lax.div(k(x, coefficient), lax.mul(zi, zi)))
        denom = lax.add(denom, lax.div(k(x, coefficient), zi))
    t, log_t = _log_t(z)
    value = lax.sub(lax.add(log_t, lax.div(num, denom)), lax.div(k(x, _G), t))
    # reflection: digamma(1 - x) - pi cot(pi x), x shifted into [-1/2, 1/2] first
    reduced = lax.add(x, lax.abs(lax.floor(lax.add(x, k(x, 0.5)))))
    angle = lax.mul(k(x, math.pi), reduced)
    reflection = lax.sub(value, lax.div(lax.mul(k(x, math.pi), lax.cos(angle)), lax.sin(angle)))
    value = lax.select(reflect, reflection, value)
    pole = lax.bitwise_and(lax.le(x, k(x, 0)), lax.eq(x, lax.floor(x)))
    return lax.select(pole, full(x, np.nan), value)


class _Mode(enum.Enum):
    """What the series / continued fraction return: P (or Q) itself, dP/da, or the derivative
    of a Gamma(a) sample with respect to a at fixed noise (-(dP/da) / (dP/dx))."""

    VALUE = 1
    DERIVATIVE = 2
    SAMPLE_DERIVATIVE = 3


def _eps(x: Any) -> np.ndarray:
    return k(x, ml_dtypes.finfo(x.dtype).eps)


def _frozen(on: Any, new: tuple[Any, ...], old: tuple[Any, ...]) -> tuple[Any, ...]:
    """The new loop values where ``on``, the old ones elsewhere."""
    return tuple(lax.select(on, n, o) for n, o in zip(new, old, strict=True))


def _series(ax: Any, x: Any, a: Any, enabled: Any, mode: _Mode) -> Any:
    """P(a, x) = x^a e^-x / Gamma(a + 1) * sum_n x^n / (a+1)...(a+n), or a derivative of it."""
    eps = _eps(x)

    def body(vals: tuple[Any, ...]) -> tuple[Any, ...]:
        on, r, c, ans, dc_da, dans_da = vals
        r = lax.add(r, k(r, 1))
        dc_da = lax.sub(lax.mul(dc_da, lax.div(x, r)), lax.div(lax.mul(c, x), lax.mul(r, r)))
        dans_da = lax.add(dans_da, dc_da)
        c = lax.mul(c, lax.div(x, r))
        ans = lax.add(ans, c)
        test = lax.div(c, ans) if mode is _Mode.VALUE else lax.abs(lax.div(dc_da, dans_da))
        going = lax.bitwise_and(on, lax.gt(test, eps))
        return (going, *_frozen(on, (r, c, ans, dc_da, dans_da), vals[1:]))

    init = (enabled, a, full(a, 1), full(a, 1), full(a, 0), full(a, 0))
    _, _, _, ans, _, dans_da = lax.while_loop(lambda vals: reduce_any(vals[0]), body, init)
    if mode is _Mode.VALUE:
        return lax.div(lax.mul(ans, ax), a)
    dlogax_da = lax.sub(lax.log(x), digamma(lax.add(a, k(a, 1))))
    if mode is _Mode.DERIVATIVE:
        return lax.div(lax.mul(ax, lax.add(lax.mul(ans, dlogax_da), dans_da)), a)
    return lax.div(lax.mul(lax.neg(lax.add(dans_da, lax.mul(ans, dlogax_da))), x), a)


def _next_da(dkm1: Any, km1: Any, dkm2: Any, km2: Any, z: Any, yc: Any, c: Any) -> Any:
    """d/da of the next convergent term ``km1 z - km2 y c`` (y = c + 1 - a)."""
    return lax.add(lax.sub(lax.sub(lax.mul(dkm1, z), km1), lax.mul(dkm2, yc)), lax.mul(km2, c))


def _continued_fraction(ax: Any, x: Any, a: Any, enabled: Any, mode: _Mode) -> Any:
    """Q(a, x) by its continued fraction (convergents p/q, rescaled when they pass 1/eps; at
    most 2000 terms), or a derivative of it, the convergents differentiated in a alongside."""
    eps = _eps(x)

    def body(vals: tuple[Any, ...]) -> tuple[Any, ...]:
        on, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da = vals
        c = lax.add(c, k(c, 1))
        y = lax.add(y, k(y, 1))
        z = lax.add(z, k(z, 2))
        yc = lax.mul(y, c)
        pk = lax.sub(lax.mul(pkm1, z), lax.mul(pkm2, yc))
        qk = lax.sub(lax.mul(qkm1, z), lax.mul(qkm2, yc))
        nonzero = lax.ne(qk, k(qk, 0))
        r = lax.div(pk, qk)
        t = lax.select(nonzero, lax.abs(lax.div(lax.sub(ans, r), r)), full(r, 1))
        ans = lax.select(nonzero, r, ans)
        dpk_da = _next_da(dpkm1_da, pkm1, dpkm2_da, pkm2, z, yc, c)
        dqk_da = _next_da(dqkm1_da, qkm1, dqkm2_da, qkm2, z, yc, c)
        dans_da_new = lax.select(nonzero, lax.div(lax.sub(dpk_da, lax.mul(ans, dqk_da)), qk), dans_da)
        change = lax.select(nonzero, lax.abs(lax.sub(dans_da_new, dans_da)), full(dans_da, 1))
        # the convergents shift down one (pk becomes pkm1, pkm1 pkm2, ...), rescaled by eps
        # where they grew past 1 / eps
        rescale = lax.gt(lax.abs(pk), lax.div(k(pk, 1), eps))
        shifted = tuple(lax.select(rescale, lax.mul(v, eps), v)
                        for v in (pk, qk, pkm1, qkm1, dpkm1_da, dqkm1_da, dpk_da, dqk_da))
        going = lax.bitwise_and(on, lax.gt(t if mode is _Mode.VALUE else change, eps))
        return (going, *_frozen(on, (ans, t, y, z), vals[1:5]), c,
                *_frozen(on, (*shifted, dans_da_new), vals[6:]))

    y = lax.sub(k(a, 1), a)
    z = lax.add(lax.add(x, y), k(x, 1))
    pkm1, qkm1 = lax.add(x, k(x, 1)), lax.mul(z, x)
    ans = lax.div(pkm1, qkm1)
    zeros = full(x, 0)
    dqkm1_da = lax.neg(x)
    dans_da = lax.div(lax.neg(lax.mul(ans, dqkm1_da)), qkm1)
    init = (enabled, ans, full(x, 1), y, z, k(x, 0), pkm1, qkm1, full(x, 1), x,
            zeros, zeros, zeros, dqkm1_da, dans_da)

    def cond(vals: tuple[Any, ...]) -> Any:
        return lax.bitwise_and(lax.lt(vals[5], k(x, 2000)), reduce_any(vals[0]))

    vals = lax.while_loop(cond, body, init)
    if mode is _Mode.VALUE:
        return lax.mul(vals[1], ax)
    dlogax_da = lax.sub(lax.log(x), digamma(a))
    if mode is _Mode.DERIVATIVE:
        return lax.mul(ax, lax.add(lax.mul(vals[1], dlogax_da), vals[14]))
    return lax.neg(lax.mul(lax.add(vals[14], lax.mul(vals[1], dlogax_da)), x))


def _log_ax(a: Any, x: Any) -> tuple[Any, Any]:
    """exp(a log x - x - lgamma(a)), the prefactor of both expansions, and whether it underflows."""
    log_ax = lax.sub(lax.sub(lax.mul(a, lax.log(x)), x), lgamma(a))
    underflow = lax.lt(log_ax, k(x, -np.log(ml_dtypes.finfo(x.dtype).max)))
    return lax.exp(log_ax), underflow


def igamma(a: Any, x: Any) -> Any:
    """P(a, x); 0 at x = 0, 1 at x = inf, NaN for x < 0, a < 0, a = x = 0 or NaN."""
    is_nan = lax.bitwise_or(isnan(a), isnan(x))
    x_is_inf = lax.eq(x, k(x, np.inf))
    x_is_zero = lax.eq(x, k(x, 0))
    domain_error = any_of(lax.lt(x, k(x, 0)), lax.lt(a, k(a, 0)),
                          lax.bitwise_and(lax.eq(a, k(a, 0)), x_is_zero), is_nan)
    use_cf = lax.bitwise_and(lax.ge(x, k(x, 1)), lax.gt(x, a))
    ax, underflow = _log_ax(a, x)
    enabled = lax.bitwise_not(any_of(x_is_zero, domain_error, underflow, x_is_inf))
    out = lax.select(use_cf,
                     lax.sub(k(a, 1), _continued_fraction(ax, x, a, lax.bitwise_and(enabled, use_cf),
                                                          _Mode.VALUE)),
                     _series(ax, x, a, lax.bitwise_and(enabled, lax.bitwise_not(use_cf)), _Mode.VALUE))
    out = lax.select(x_is_zero, full(a, 0), out)
    out = lax.select(x_is_inf, full(a, 1), out)
    return lax.select(domain_error, full(a, np.nan), out)


def igammac(a: Any, x: Any) -> Any:
    """Q(a, x) = 1 - P(a, x); 0 at x = inf and at a = 0."""
    is_nan = lax.bitwise_or(isnan(a), isnan(x))
    a_is_zero = lax.eq(a, k(a, 0))
    x_is_inf = lax.eq(x, k(x, np.inf))
    domain_error = any_of(lax.lt(x, k(x, 0)), lax.lt(a, k(a, 0)),
                          lax.bitwise_and(a_is_zero, lax.eq(x, k(x, 0))), is_nan)
    use_series = lax.bitwise_or(lax.lt(x, k(x, 1)), lax.lt(x, a))
    ax, underflow = _log_ax(a, x)
    enabled = lax.bitwise_not(any_of(domain_error, underflow, x_is_inf, a_is_zero))
    out = lax.select(use_series,
                     lax.sub(k(a, 1), _series(ax, x, a, lax.bitwise_and(enabled, use_series), _Mode.VALUE)),
                     _continued_fraction(ax, x, a, lax.bitwise_and(enabled, lax.bitwise_not(use_series)),
                                         _Mode.VALUE))
    out = lax.select(lax.bitwise_or(x_is_inf, a_is_zero), full(a, 0), out)
    return lax.select(domain_error, full(a, np.nan), out)


def _derivative(a: Any, x: Any, mode: _Mode) -> Any:
    """dP/da (DERIVATIVE) or d sample / da (SAMPLE_DERIVATIVE): 0 at x = 0, NaN for a <= 0,
    x < 0 or NaN."""
    is_nan = lax.bitwise_or(isnan(a), isnan(x))
    x_is_zero = lax.eq(x, k(x, 0))
    domain_error = lax.bitwise_or(lax.lt(x, k(x, 0)), lax.le(a, k(a, 0)))
    use_cf = lax.bitwise_and(lax.gt(x, k(x, 1)), lax.gt(x, a))
    ax, underflow = _log_ax(a, x)
    enabled = lax.bitwise_not(any_of(x_is_zero, domain_error, underflow, is_nan))
    out = lax.select(use_cf, lax.neg(_continued_fraction(ax, x, a, lax.bitwise_and(enabled, use_cf), mode)),
                     _series(ax, x, a, lax.bitwise_and(enabled, lax.bitwise_not(use_cf)), mode))
    out = lax.select(x_is_zero, full(a, 0), out)
    return lax.select(lax.bitwise_or(domain_error, is_nan), full(a, np.nan), out)


def igamma_grad_a(a: Any, x: Any) -> Any:
    """dP(a, x)/da."""
    return _derivative(a, x, _Mode.DERIVATIVE)


def random_gamma_grad(a: Any, x: Any) -> Any:
    """d x / d a for Gamma(a) samples x at fixed noise (implicit reparameterization)."""
    return _derivative(a, x, _Mode.SAMPLE_DERIVATIVE)
