"""The confluent and Gauss hypergeometric functions, Owen's T function and the Bessel functions
of the first kind of integer order of mlax.scipy.special (as jax.scipy.special, real
arguments), by jax's algorithms:

- hyp1f1: the Taylor series for |x| < 100, the asymptotic expansion beyond (Pearson, Olver and
  Porter 2014, eqs. 3.2 and 3.8), at most 250 terms;
- hyp2f1: the Taylor series, terminating when a or b is a non-positive integer, with the
  linear transformations of AMS55 15.3.3-15.3.12 near x = 1 (digamma sums when c - a - b is an
  integer);
- owens_t: 13-point Gauss quadrature of the canonical integral (Patefield and Tandy's T5),
  with T(h, a) = ... - T(ah, 1/a) for |a| > 1;
- bessel_jn: Miller's backward recurrence from order n_iter, normalized by
  J0 + 2 (J2 + J4 + ...) = 1 (Zhang and Jin's BJNDD).

jax vectorizes the hypergeometric functions elementwise, so every loop runs on every element
until that element's own stopping rule holds (``while_each``); the derivatives are jax's
series in a, b, c and the contiguous relations in x.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.custom_derivatives import custom_jvp
from mlax.numpy.util import promote_args_inexact
from mlax.scipy.special.gamma_family import digamma, gamma
from mlax.scipy.special.integrals import while_each

__all__ = ["bessel_jn", "hyp1f1", "hyp2f1", "owens_t"]


def _c(x: Any, value: float) -> Any:
    return np.array(value, x.dtype)


def _eps(x: Any) -> Any:
    return _c(x, float(ml_dtypes.finfo(x.dtype).eps))


def _broadcast(*args: Any) -> list[Any]:
    shape = np.broadcast_shapes(*(a.shape for a in args))
    return [mnp.broadcast_to(a, shape) for a in args]


def _series(ratio: Callable[[Any], Any], first: Any, serie: Any, weight: Callable[[Any], Any] | None = None,
            relative: bool = True) -> Any:
    """``serie + sum_k weight(k) term_k`` (weight 1 without one), ``term_1 = first``,
    ``term_(k+1) = term_k ratio(k)``, up to k = 249 or until ``|term| <= eps |serie|`` (with
    ``relative``: the ratio ``|term| / |serie|``, NaN at 0 / 0 stopping)."""
    eps = _eps(first)

    def cond(s: tuple[Any, ...]) -> Any:
        total, k, term = s
        small = lax.abs(term) / lax.abs(total) > eps if relative else lax.abs(term) > eps * lax.abs(total)
        return (k < 250) & small

    def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
        total, k, term = s
        total = total + (term if weight is None else term * weight(k))
        return total, k + _c(k, 1), term * ratio(k)

    return while_each(cond, body, (serie, mnp.ones_like(first), first))[0]


# ---- hyp1f1 ----------------------------------------------------------------------------------

def _hyp1f1_ratio(a: Any, b: Any, x: Any) -> Callable[[Any], Any]:
    return lambda k: (a + k) / (b + k) * x / (k + 1)


def _hyp1f1_values(a: Any, b: Any, x: Any) -> Any:
    near = lax.abs(x) < 100
    taylor = _series(_hyp1f1_ratio(a, b, x), a / b * x, mnp.ones_like(x))
    asymptotic = _series(lambda k: (b - a + k) * (1 - a + k) / (k + 1) / x, (b - a) * (1 - a) / x,
                         mnp.ones_like(x))
    asymptotic = gamma(b) / gamma(a) * lax.exp(x) * x ** (a - b) * asymptotic
    value = mnp.where(near, taylor, asymptotic)
    a_zero = a == 0
    return mnp.select([a_zero, a == b, b == 0], [_c(x, 1), lax.exp(x), _c(x, np.inf)], value)


@custom_jvp
def _hyp1f1(a: Any, b: Any, x: Any) -> Any:
    return _hyp1f1_values(a, b, x)


@_hyp1f1.defjvp
def _hyp1f1_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    (a, b, x), (a_dot, b_dot, x_dot) = primals, tangents
    zero, first, ratio = mnp.zeros_like(x), a / b * x, _hyp1f1_ratio(a, b, x)
    d_a = _series(ratio, first, zero, lambda k: digamma(a + k) - digamma(a))
    d_b = _series(ratio, first, zero, lambda k: digamma(b) - digamma(b + k))
    d_x = a / b * _hyp1f1(a + 1, b + 1, x)
    return _hyp1f1(a, b, x), d_a * a_dot + d_b * b_dot + d_x * x_dot


def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """The confluent hypergeometric function ``1F1(a; b; x) = sum_k (a)_k / (b)_k x^k / k!``
    (1 at a = b = 0, unlike scipy)."""
    return _hyp1f1(*_broadcast(*promote_args_inexact("hyp1f1", a, b, x)))


# ---- hyp2f1 ----------------------------------------------------------------------------------

def _is_int(v: Any, eps: Any) -> Any:
    return lax.abs(v - mnp.round(v)) < eps


def _hyp2f1_terminal(a: Any, b: Any, c: Any, x: Any, active: Any) -> Any:
    """The polynomial when a or b is a non-positive integer, to the larger usable degree."""
    eps = _eps(x) * 50
    swap = (b < a) & _is_int(b, eps) & ~((c % 1 == 0) & (c <= 0) & (c > b))
    a, b = mnp.where(swap, b, a), mnp.where(swap, a, b)
    a = lax.abs(a)

    def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
        i, total, term = s
        term = term * (-(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x)
        return i + 1, total + term, term

    one = mnp.ones_like(x)
    return while_each(lambda s: active & (s[0] < a + 1), body, (one, one, one))[1]


def _each(fn: Callable[[Any], Any], *xs: Any) -> list[Any]:
    """The elementwise ``fn`` of each of ``xs`` (one shape) through one call: one copy of its
    program (and of its derivative rules) instead of one per argument."""
    out = fn(mnp.stack(xs))
    return [out[i] for i in range(len(xs))]


def _hyp2f1_digamma_sum(a: Any, b: Any, c: Any, x: Any) -> Any:
    """AMS55 15.3.10-15.3.12: the expansion about x = 1 when c - a - b is an integer."""
    d, s = c - a - b, 1 - x
    rd = mnp.round(d)
    up = rd >= 0
    zero = mnp.zeros_like(d)
    e, d1, d2 = mnp.where(up, d, -d), mnp.where(up, d, zero), mnp.where(up, zero, d)
    ard = mnp.where(up, rd, -rd).astype(np.int32)
    ax = lax.log(s)
    g_e1, g_e2, gc, g_e, g_ad1, g_bd1, g_ad2, g_bd2, g_a, g_b = _each(
        gamma, e + 1.0, e + 2.0, c, e, a + d1, b + d1, a + d2, b + d2, a, b)
    p1, p2, p3, p4 = _each(digamma, mnp.ones_like(x), 1.0 + e, a + d1, b + d1)
    y = (p1 + p2 - p3 - p4 - ax) / g_e1
    p = (a + d1) * (b + d1) * s / g_e2

    def body(st: tuple[Any, ...]) -> tuple[Any, ...]:
        p, q, t, y = st
        p1, p2, p3, p4 = _each(digamma, 1.0 + t, 1.0 + t + e, a + t + d1, b + t + d1)
        r = p1 + p2 - p3 - p4 - ax
        q = p * r
        y = y + q
        p = p * (s * (a + t + d1) / (t + 1.0))
        p = p * ((b + t + d1) / (t + 1.0 + e))
        return p, q, t + 1.0, y

    _, _, _, y = while_each(lambda st: (st[2] < 250) & (lax.abs(st[1]) >= _eps(x) * lax.abs(st[3])), body,
                            (p, y, mnp.ones_like(x), y))

    def finite_body(st: tuple[Any, ...]) -> tuple[Any, ...]:
        i, p, t, y1 = st
        p = p * (s * (a + t + d2) * (b + t + d2) / (1.0 - e + t))
        t = t + 1.0
        p = p / t
        return i + 1, p, t, y1 + p

    one = mnp.ones_like(x)
    y1 = while_each(lambda st: st[0] < ard, finite_body, (mnp.ones_like(ard), one, mnp.zeros_like(x), one))[3]
    y1 = y1 * (g_e * gc / (g_ad1 * g_bd1))
    y_sum = y * (gc / (g_ad2 * g_bd2))
    y_sum = mnp.where((ard & 1) != 0, -y_sum, y_sum)
    q = s ** rd
    summed = mnp.where(rd > 0, y_sum * q + y1, y_sum + y1 * q)
    return mnp.where(rd == 0, y * gc / (g_a * g_b), summed)


def _hyp2f1_terminal_or_series(a: Any, b: Any, c: Any, x: Any) -> Any:
    eps = _eps(x) * 50
    d = c - a - b
    neg_int = ((a <= 0) & _is_int(a, eps)) | ((b <= 0) & _is_int(b, eps))
    near_one = (x > 0.9) & ~neg_int
    taylor = _series(lambda k: (a + k - 1) * (b + k - 1) / (c + k - 1) / k * x, mnp.ones_like(x),
                     mnp.zeros_like(x), relative=False)
    return mnp.select([near_one & _is_int(d, eps), neg_int],
                      [_hyp2f1_digamma_sum(a, b, c, x), _hyp2f1_terminal(a, b, c, x, neg_int)], taylor)


@custom_jvp
def _hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    eps = _eps(x) * 50
    d, s, ca, cb = c - a - b, 1 - x, c - a, c - b
    inf = _c(x, np.inf)
    conds = [(x == 0) | (((a == 0) | (b == 0)) & (c != 0)),
             (c == 0) | ((c < 0) & (c % 1 == 0)),
             (d <= -1) & ~(~_is_int(d, eps) & (s < 0)),
             (d <= 0) & (x == 1),
             (x < 1) & (b == c),
             (x < 1) & (a == c),
             x > 1,
             x == 1]
    # one series program for both uses (it dominates the compile): Euler's transformation's
    # (c - a, c - b) where its condition is the first to hold, (a, b) elsewhere
    euler = conds[2] & ~conds[0] & ~conds[1]
    series = _hyp2f1_terminal_or_series(mnp.where(euler, ca, a), mnp.where(euler, cb, b), c, x)
    values = [_c(x, 1), inf, s ** d * series, inf, s ** (-a), s ** (-b), inf,
              gamma(c) * gamma(d) / (gamma(ca) * gamma(cb))]
    return mnp.select(conds, values, series)


@_hyp2f1.defjvp
def _hyp2f1_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    (a, b, c, x), dots = primals, tangents
    zero, first = mnp.zeros_like(x), a * b / c * x

    def ratio(k: Any) -> Any:
        return (a + k) * (b + k) / (c + k) / (k + 1) * x

    weights = [lambda k: digamma(a + k) - digamma(a), lambda k: digamma(b + k) - digamma(b),
               lambda k: digamma(c) - digamma(c + k)]
    partials = [_series(ratio, first, zero, w) for w in weights]
    # 2F1(a, b, c, x) and 2F1(a + 1, b + 1, c + 1, x) as one call: one program, not two
    value, shifted = _hyp2f1(*(mnp.stack([v, v + 1]) for v in (a, b, c)), mnp.stack([x, x]))
    partials.append(a * b / c * shifted)
    tangent = sum((p * t for p, t in zip(partials[1:], dots[1:], strict=True)), partials[0] * dots[0])
    return value, tangent


def hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    """The Gauss hypergeometric function ``2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x^k / k!``."""
    return _hyp2f1(*_broadcast(*promote_args_inexact("hyp2f1", a, b, c, x)))


# ---- owens_t ---------------------------------------------------------------------------------

# nodes t_i and weights w_i of T(h, a) ~ a sum_i w_i exp(-h^2 (1 + a^2 t_i) / 2) / (1 + a^2 t_i)
_OWENS_T_NODES = np.array([
    0.0035082039676451715, 0.031279042338030754, 0.085266826283219451, 0.16245071730812277,
    0.25851196049125435, 0.36807553840697534, 0.48501092905604697, 0.60277514152618577,
    0.71477884217753227, 0.81475510988760099, 0.89711029755948966, 0.95723808085944262,
    0.99178832974629704])
_OWENS_T_WEIGHTS = np.array([
    0.018831438115323503, 0.018567086243977649, 0.018042093461223386, 0.017263829606398753,
    0.016243219975989857, 0.014994592034116705, 0.013535474469662088, 0.011886351605820165,
    0.010070377242777432, 0.0081130545742299587, 0.0060419009528470239, 0.0038862217010742058,
    0.0016793031084546090])


def _owens_t_values(h: Any, a: Any) -> Any:
    h, abs_a = lax.abs(h), lax.abs(a)
    root_2 = _c(h, np.sqrt(2))
    h_normed = h / root_2
    inside = abs_a <= 1.0
    mod_a = mnp.where(inside, abs_a, 1.0 / abs_a)
    mod_h = mnp.where(inside, h, abs_a * h)
    r = mnp.square(mod_a)[..., None] * _OWENS_T_NODES
    integrand = lax.exp(-0.5 * mnp.square(mod_h)[..., None] * (1.0 + r)) / (1.0 + r)
    result = mod_a * (integrand @ _OWENS_T_WEIGHTS)
    result = mnp.where(mod_h == 0.0, mnp.arctan(mod_a) / (2 * np.pi), result)
    result = mnp.where(mod_a == 1.0, 0.125 * lax.erfc(-mod_h / root_2) * lax.erfc(mod_h / root_2), result)
    norm_h, norm_ah = lax.erfc(h_normed), lax.erfc(abs_a * h_normed)
    reflected = mnp.where(abs_a * h <= 0.67,
                          0.25 - 0.25 * lax.erf(h_normed) * lax.erf(abs_a * h_normed) - result,
                          0.25 * (norm_h + norm_ah - norm_h * norm_ah) - result)
    result = lax.sign(a) * mnp.where(abs_a > 1.0, reflected, result)
    return mnp.where(mnp.isnan(a) | mnp.isnan(h), _c(result, np.nan), result)


_owens_t = custom_jvp(_owens_t_values)


@_owens_t.defjvp
def _owens_t_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    (h, a), (dh, da) = primals, tangents
    d_h = (-lax.exp(-0.5 * mnp.square(h)) * lax.erf(a * h / _c(h, np.sqrt(2)))
           / (2.0 * _c(h, np.sqrt(2 * np.pi))))
    d_a = lax.exp(-0.5 * (mnp.square(a) + 1.0) * mnp.square(h)) / (2.0 * np.pi * (mnp.square(a) + 1.0))
    result = _owens_t(h, a)
    return result, (d_h * dh + d_a * da).astype(result.dtype)


def owens_t(h: Any, a: Any) -> Any:
    """Owen's T function ``T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx``."""
    return _owens_t(*promote_args_inexact("owens_t", h, a))


# ---- bessel_jn -------------------------------------------------------------------------------

def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Any:
    """J_0(z), ..., J_v(z) stacked on a new leading axis, by backward recurrence from order
    ``n_iter`` (static, as ``v``)."""
    (z,) = promote_args_inexact("bessel_jn", mnp.asarray(z))
    v = operator.index(v)
    n_iter = int(n_iter)
    f0, f1, total = mnp.zeros_like(z), mnp.full_like(z, 1e-16), mnp.zeros_like(z)
    values = []
    for k in range(n_iter, -1, -1):
        f = 2.0 * (_c(z, k) + 1.0) * f1 / z - f0
        if k % 2 == 0:
            total = total + 2.0 * f
        f0, f1 = f1, f
        values.append(f)
    return mnp.stack(values[::-1])[: v + 1] / (total - f1)
