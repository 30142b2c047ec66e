"""``random_gamma_grad(a, x)``: the derivative of a Gamma(a) sample x with respect to a at
fixed noise (implicit reparameterization, ``-(dP(a, x)/da) / (dP(a, x)/dx)`` for the
regularized incomplete gamma function P), as jax's ``lax.random_gamma_grad``: the power
series of P below x = max(1, a), Legendre's continued fraction of Q = 1 - P above, both
differentiated in a alongside, iterated to float epsilon. ``mlax.random.gamma`` (and beta,
dirichlet, ... built on it) differentiate through it.

Each element runs the scalar recurrence of jax's implementation; the arrays iterate until
every element has converged, each frozen once it has (by select), so the values are what a
per-element loop gives.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.scipy.special.lanczos import digamma, gammaln

__all__ = ["random_gamma_grad"]


def _series(x: Any, a: Any, enabled: Any) -> Any:
    """d x / d a from the series P(a, x) = x^a e^-x / Gamma(a + 1) * sum_n x^n / (a+1)...(a+n)."""
    eps = np.array(mnp.finfo(x.dtype).eps, x.dtype)

    def body(vals: tuple[Any, ...]) -> tuple[Any, ...]:
        on, r, c, ans, xx, dc_da, dans_da = vals
        r = lax.add(r, np.array(1, r.dtype))
        dc_da = lax.sub(lax.mul(dc_da, lax.div(xx, r)), lax.div(lax.mul(c, xx), lax.mul(r, r)))
        dans_da = lax.add(dans_da, dc_da)
        c = lax.mul(c, lax.div(xx, r))
        ans = lax.add(ans, c)
        going = lax.bitwise_and(on, lax.gt(lax.abs(lax.div(dc_da, dans_da)), eps))
        new = (r, c, ans, xx, dc_da, dans_da)
        return (going, *(lax.select(on, n, o) for n, o in zip(new, vals[1:], strict=True)))

    ones, zeros = mnp.ones_like(a), mnp.zeros_like(a)
    vals = lax.while_loop(lambda vals: mnp.any(vals[0]), body, (enabled, a, ones, ones, x, zeros, zeros))
    ans, dans_da = vals[3], vals[6]
    dlogax_da = lax.sub(lax.log(x), digamma(lax.add(a, np.array(1, a.dtype))))
    return lax.div(lax.mul(lax.neg(lax.add(dans_da, lax.mul(ans, dlogax_da))), x), a)


def _continued_fraction(x: Any, a: Any, enabled: Any) -> Any:
    """d x / d a from the continued fraction of Q(a, x) (rescaled when its terms grow past
    1 / eps), at most 2000 terms."""
    dtype = x.dtype
    eps = np.array(mnp.finfo(dtype).eps, dtype)
    one = np.array(1, dtype)

    def body(vals: tuple[Any, ...]) -> tuple[Any, ...]:
        (on, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da) = vals
        c = lax.add(c, one)
        y = lax.add(y, one)
        z = lax.add(z, np.array(2, dtype))
        yc = lax.mul(y, c)
        pk = lax.sub(lax.mul(pkm1, z), lax.mul(pkm2, yc))
        qk = lax.sub(lax.mul(qkm1, z), lax.mul(qkm2, yc))
        nonzero = lax.ne(qk, np.array(0, dtype))
        r = lax.div(pk, qk)
        t = lax.select(nonzero, lax.abs(lax.div(lax.sub(ans, r), r)), mnp.ones_like(r))
        ans = lax.select(nonzero, r, ans)
        dpk_da = dpkm1_da * z - pkm1 - dpkm2_da * yc + pkm2 * c
        dqk_da = dqkm1_da * z - qkm1 - dqkm2_da * yc + qkm2 * c
        dans_da_new = lax.select(nonzero, lax.div(lax.sub(dpk_da, lax.mul(ans, dqk_da)), qk), dans_da)
        change = lax.select(nonzero, lax.abs(lax.sub(dans_da_new, dans_da)), mnp.ones_like(dans_da))
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = dpkm1_da, dqkm1_da, dpk_da, dqk_da
        rescale = lax.gt(lax.abs(pk), lax.div(one, eps))
        pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = (
            lax.select(rescale, lax.mul(v, eps), v)
            for v in (pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da))
        going = lax.bitwise_and(on, lax.gt(change, eps))
        kept = (ans, t, y, z)
        tail = (pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da_new)
        return (going, *(lax.select(on, n, o) for n, o in zip(kept, vals[1:5], strict=True)), c,
                *(lax.select(on, n, o) for n, o in zip(tail, vals[6:], strict=True)))

    y = lax.sub(one, a)
    z = lax.add(lax.add(x, y), one)
    pkm1, qkm1 = lax.add(x, one), lax.mul(z, x)
    ans = lax.div(pkm1, qkm1)
    zeros = mnp.zeros_like(x)
    dqkm1_da = lax.neg(x)
    dans_da = lax.div(lax.sub(zeros, lax.mul(ans, dqkm1_da)), qkm1)
    init = (enabled, ans, mnp.ones_like(x), y, z, np.array(0, dtype), pkm1, qkm1, mnp.ones_like(x), x,
            zeros, zeros, zeros, dqkm1_da, dans_da)

    def cond(vals: tuple[Any, ...]) -> Any:
        return lax.bitwise_and(lax.lt(vals[5], np.array(2000, dtype)), mnp.any(vals[0]))

    vals = lax.while_loop(cond, body, init)
    dlogax_da = lax.sub(lax.log(x), digamma(a))
    return lax.mul(lax.neg(lax.add(vals[14], lax.mul(vals[1], dlogax_da))), x)


def random_gamma_grad(a: Any, x: Any) -> Any:
    """d x / d a for Gamma(a) samples x (same shape and float dtype as a): 0 at x = 0, NaN
    for a <= 0, x < 0 or NaN inputs."""
    dtype = a.dtype
    is_nan = lax.bitwise_or(mnp.isnan(a), mnp.isnan(x))
    x_is_zero = lax.eq(x, np.array(0, dtype))
    domain_error = lax.bitwise_or(lax.lt(x, np.array(0, dtype)), lax.le(a, np.array(0, dtype)))
    use_cf = lax.bitwise_and(lax.gt(x, np.array(1, dtype)), lax.gt(x, a))
    log_ax = lax.sub(lax.sub(lax.mul(a, lax.log(x)), x), gammaln(a))
    underflow = lax.lt(log_ax, np.array(-np.log(mnp.finfo(dtype).max), dtype))
    enabled = ~(x_is_zero | domain_error | underflow | is_nan)
    output = lax.select(use_cf, lax.neg(_continued_fraction(x, a, lax.bitwise_and(enabled, use_cf))),
                        _series(x, a, lax.bitwise_and(enabled, lax.bitwise_not(use_cf))))
    output = lax.select(x_is_zero, mnp.zeros_like(output), output)
    return lax.select(lax.bitwise_or(domain_error, is_nan), mnp.full_like(a, np.nan), output)
