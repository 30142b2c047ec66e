"""The rejection samplers of jax.random: gamma / loggamma (Marsaglia and Tsang), poisson
(Knuth below rate 10, Hoermann's transformed rejection above), binomial (inversion, or BTRS
above n * p = 10) and multinomial (a scan of binomials), on mlax.random's public functions.

Each follows jax 0.10.2 step for step, key splits included, so the same key gives jax's
samples: jax lowers gamma as a vmap over one key per element of a while loop, and poisson /
binomial as whole-array while loops that redraw every element until all have accepted; both
are written the same way here with mlax.lax.while_loop and mlax.vmap. A sample differs from
jax's only where a rounding difference of a transcendental function (erf_inv inside normal,
log, lgamma) flips an acceptance test, or by those few ulp where it does not.

Gradients: gamma and loggamma differentiate with respect to ``a`` by implicit
reparameterization (jax's ``random_gamma_grad``), through a custom_jvp.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

import mlax
from mlax import dtypes as front_dtypes
from mlax import lax
from mlax import numpy as mnp
from mlax.batching import vmap
from mlax.custom_derivatives import custom_jvp
from mlax.lax.special_functions import random_gamma_grad
from mlax.random_arguments import (
    check_arraylike,
    check_shape,
    concrete_shape,
    param_shape,
    promote_inexact,
    sample_dtype,
    sample_shape,
    single_key,
)
from mlax.scipy.special.gamma_family import gammaln

__all__ = ["binomial", "gamma", "loggamma", "multinomial", "poisson"]


# -- gamma ------------------------------------------------------------------------------------

def _gamma_one(key: Any, alpha: Any, log_space: bool) -> Any:
    """One Gamma(alpha) sample (rank 0): Marsaglia-Tsang's squeeze-and-reject on d * V with
    V = (1 + c x)^3, x normal; alpha < 1 is boosted to alpha + 1 and scaled back by
    U^(1 / alpha) (in log space: + log(U) / alpha, with log U drawn as -exponential)."""
    dtype = alpha.dtype

    def c(value: float) -> Any:
        return np.array(value, dtype)

    boost = lax.ge(alpha, c(1))
    boosted = lax.select(boost, alpha, lax.add(alpha, c(1)))
    d = lax.sub(boosted, c(1 / 3))
    scale = lax.div(c(1 / 3), lax.sqrt(d))

    def rejected(state: tuple[Any, ...]) -> Any:
        _, x2, v, u = state
        squeeze = lax.ge(u, lax.sub(c(1), lax.mul(c(0.0331), lax.mul(x2, x2))))
        exact = lax.ge(lax.log(u), x2 * c(0.5) + d * (c(1) - v + lax.log(v)))
        return lax.bitwise_and(squeeze, exact)

    def propose(state: tuple[Any, ...]) -> tuple[Any, ...]:
        def next_normal(kxv: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
            k, subkey = mlax.random.split(kxv[0])
            x = mlax.random.normal(subkey, (), dtype)
            return k, x, lax.add(c(1), lax.mul(x, scale))

        k, x_key, u_key = mlax.random.split(state[0], 3)
        _, x, v = lax.while_loop(lambda kxv: lax.le(kxv[2], c(0)), next_normal, (x_key, c(0), c(-1)))
        return k, lax.mul(x, x), lax.mul(lax.mul(v, v), v), mlax.random.uniform(u_key, (), dtype)

    key, subkey = mlax.random.split(key)
    _, _, v, _ = lax.while_loop(rejected, propose, (key, c(0), c(1), c(2)))  # starts rejected
    if log_space:
        log_u = lax.log1p(lax.neg(mlax.random.uniform(subkey, (), dtype)))  # -exponential(subkey)
        no_boost = lax.bitwise_or(boost, lax.eq(log_u, c(0)))
        log_boost = lax.select(no_boost, c(0), lax.mul(log_u, lax.div(c(1), alpha)))
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    u = lax.sub(c(1), mlax.random.uniform(subkey, (), dtype))
    return lax.mul(lax.mul(d, v), lax.select(boost, c(1), lax.pow(u, lax.div(c(1), alpha))))


def _gamma_impl(key: Any, a: Any, log_space: bool) -> Any:
    """Samples of shape ``a.shape``: element i draws with the i-th key of ``split(key, a.size)``."""
    if a.size == 0:
        return mnp.zeros(a.shape, a.dtype)
    keys = mlax.random.split(key, a.size)
    samples = vmap(functools.partial(_gamma_one, log_space=log_space))(keys, mnp.reshape(a, (-1,)))
    return mnp.reshape(samples, a.shape)


def _gamma_grad(sample: Any, a: Any, log_space: bool) -> Any:
    """d sample / d a at fixed uniform noise (jax's implicit reparameterization gradient)."""
    if not log_space:
        return random_gamma_grad(a, sample)
    x = lax.exp(sample)  # d log(x) = dx / x; x underflowing to 0 is taken as the smallest normal
    x = mnp.where(lax.eq(x, np.array(0, x.dtype)), mnp.full_like(x, mnp.finfo(x.dtype).tiny), x)
    return lax.div(random_gamma_grad(a, x), x)


_gamma_samples = custom_jvp(_gamma_impl, nondiff_argnums=(0, 2))


@_gamma_samples.defjvp
def _gamma_samples_jvp(key: Any, log_space: bool, primals: tuple[Any],
                       tangents: tuple[Any]) -> tuple[Any, Any]:
    (a,), (t,) = primals, tangents
    sample = _gamma_samples(key, a, log_space)
    return sample, lax.mul(t, _gamma_grad(sample, a, log_space))


def _gamma(name: str, key: Any, a: Any, shape: Any, dtype: Any, log_space: bool) -> Any:
    key = single_key(name, key)
    dtype = sample_dtype(name, dtype, message_name="gamma")
    if shape is None:
        shape = param_shape(a)
    else:
        shape = concrete_shape(name, shape)
        check_shape("gamma", shape, param_shape(a))
    a = lax.convert_element_type(a, dtype)
    if a.shape != shape:
        a = mnp.broadcast_to(a, shape)
    # the custom_jvp takes the key's raw uint32 data (a typed key is not an array it can trace)
    return _gamma_samples(mlax.random.key_data(key), a, log_space)


def gamma(key: Any, a: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Gamma(a) samples with unit scale (divide by a rate, multiply by a scale); differentiable
    in ``a``."""
    return _gamma("gamma", key, a, shape, dtype, log_space=False)


def loggamma(key: Any, a: Any, shape: Any = None, dtype: Any = None) -> Any:
    """``log`` of Gamma(a) samples, computed in log space (exact for tiny ``a``, where the
    samples themselves underflow); ``exp(loggamma(k, a)) ~= gamma(k, a)``."""
    return _gamma("loggamma", key, a, shape, dtype, log_space=True)


# -- poisson ------------------------------------------------------------------------------------

def _poisson_knuth(key: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype, max_iters: int) -> Any:
    """Knuth: count uniforms until their product drops below exp(-lam); all elements draw a
    uniform per round until the last has stopped."""

    def body(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        i, k, rng, log_prod = carry
        rng, subkey = mlax.random.split(rng)
        k = lax.select(lax.gt(log_prod, lax.neg(lam)), lax.add(k, np.array(1, dtype)), k)
        return i + 1, k, rng, log_prod + lax.log(mlax.random.uniform(subkey, shape, np.float32))

    def cond(carry: tuple[Any, ...]) -> Any:
        i, _, _, log_prod = carry
        return lax.bitwise_and(mnp.any(lax.gt(log_prod, lax.neg(lam))), lax.lt(i, max_iters))

    init = (mnp.asarray(0), mnp.zeros(shape, dtype), key, mnp.zeros(shape, np.float32))
    k = lax.while_loop(cond, body, init)[1]
    return lax.sub(k, np.array(1, dtype))


def _poisson_rejection(key: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype, max_iters: int) -> Any:
    """Hoermann's transformed rejection (PTRS) with its squeeze constants."""
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        i, k_out, accepted, rng = carry
        rng, key0, key1 = mlax.random.split(rng, 3)
        u = mlax.random.uniform(key0, shape, lam.dtype) - 0.5
        v = mlax.random.uniform(key1, shape, lam.dtype)
        us = 0.5 - abs(u)
        k = lax.floor((2 * a / us + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (us * us) + b))
        t = -lam + k * log_lam - gammaln(k + 1)
        accept1 = (us >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((us < 0.013) & (v > us))
        accept = accept1 | (~reject & (s <= t))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, rng

    def cond(carry: tuple[Any, ...]) -> Any:
        i, _, accepted, _ = carry
        return mnp.any(~accepted) & (i < max_iters)

    init = (mnp.asarray(0), mnp.full(shape, -1, lam.dtype), mnp.zeros(shape, bool), key)
    return mnp.astype(lax.while_loop(cond, body, init)[1], dtype)


def poisson(key: Any, lam: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Poisson(lam) counts (default int32, int64 under x64); ``lam`` is read as float32, as
    in jax. Both samplers run on the whole array and each element takes one's result."""
    key = single_key("poisson", key)
    dtype = sample_dtype("poisson", dtype, np.integer, np.int64)
    shape = param_shape(lam) if shape is None else concrete_shape("poisson", shape)
    lam = lax.convert_element_type(mnp.broadcast_to(lam, shape), np.float32)
    # the rounds are capped at the dtype's maximum (jax's "insanely conservative" bound)
    max_iters = min(int(mnp.iinfo(dtype).max), int(mnp.iinfo(front_dtypes.default_int()).max))
    use_knuth = mnp.logical_or(mnp.isnan(lam), mnp.less(lam, 10))
    lam_knuth = lax.select(use_knuth, lam, mnp.zeros_like(lam))
    lam_rejection = lax.select(use_knuth, mnp.full_like(lam, 1e5), lam)  # any rate accepting quickly
    result = lax.select(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters))
    return lax.select(mnp.equal(lam, 0), mnp.zeros_like(result), result)


# -- binomial ------------------------------------------------------------------------------------

_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287)


def _stirling_approx_tail(k: Any) -> Any:
    """``log k! - (Stirling's approximation)``: tabulated for k <= 9, a series beyond."""
    table = mnp.asarray(np.array(_STIRLING_TAIL, k.dtype))
    small = k <= 9
    k = lax.clamp(np.array(0, k.dtype), k, np.array(9, k.dtype))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return lax.select(small, table[mnp.astype(mnp.floor(k), np.int32)], approx)


def _binomial_inversion(key: Any, count: Any, prob: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """The number of geometric(prob) waiting times that fit in ``count`` trials."""
    log1mp = mnp.log1p(-prob)

    def body(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        num_geom, geom_sum, rng = carry
        subkey, rng = mlax.random.split(rng)
        num_geom = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        geom = mnp.ceil(mnp.log(mlax.random.uniform(subkey, shape, prob.dtype)) / log1mp)
        return num_geom, geom_sum + geom, rng

    # jax also counts rounds against finfo(dtype).max, a bound no loop reaches
    init = (mnp.zeros(shape, prob.dtype), mnp.zeros(shape, prob.dtype), key)
    k = lax.while_loop(lambda carry: mnp.any(carry[1] <= count), body, init)[0]
    return mnp.astype(k - 1, dtype)


def _btrs(key: Any, count: Any, prob: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """Hoermann's transformed rejection with squeeze (BTRS) for n * p > 10."""
    stddev = mnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = mnp.floor((count + 1) * prob)

    def body(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        k_out, accepted, rng = carry
        rng, key0, key1 = mlax.random.split(rng, 3)
        u = mlax.random.uniform(key0, shape, prob.dtype) - 0.5
        v = mlax.random.uniform(key1, shape, prob.dtype)
        us = 0.5 - abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = mnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = mnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * mnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * mnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * mnp.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m) + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k) - _stirling_approx_tail(count - k))
        accept = accept1 | (~reject & (v <= ub))
        return lax.select(accept, k, k_out), accepted | accept, rng

    init = (mnp.full(shape, -1, prob.dtype), mnp.zeros(shape, bool), key)
    k = lax.while_loop(lambda carry: mnp.any(~carry[1]), body, init)[0]
    return mnp.astype(k, dtype)


def _binomial(key: Any, count: Any, prob: Any, shape: tuple[int, ...] | None, dtype: np.dtype) -> Any:
    if shape is None:
        shape = sample_shape("binomial", None, count, prob)
    else:
        check_shape("binomial", shape, param_shape(count), param_shape(prob))
    (prob,) = promote_inexact(prob)
    count = mnp.broadcast_to(lax.convert_element_type(count, prob.dtype), shape)
    prob = mnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = mnp.isnan(count) | (count < 0.0)
    count_inf = mnp.isinf(count)
    q_is_nan, q_lt_0 = mnp.isnan(q), q < 0.0
    q = lax.select(q_is_nan | q_lt_0, mnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = mnp.floor(count)  # a float count is floored, as np.random.binomial
    count_inv = lax.select(use_inversion, count, mnp.zeros_like(count))
    count_btrs = lax.select(use_inversion, mnp.full_like(count, 1e4), count)
    q_btrs = lax.select(use_inversion, mnp.full_like(q, 0.5), q)
    samples = lax.select(use_inversion, _binomial_inversion(key, count_inv, q, shape, dtype),
                         _btrs(key, count_btrs, q_btrs, shape, dtype))
    invalid = q_lt_0 | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, mnp.full_like(samples, np.nan), samples)
    samples = lax.select(count_inf & ~invalid, mnp.full_like(samples, np.inf), samples)
    unflipped = p_lt_half | count_nan_or_neg | q_is_nan | count_inf
    return lax.select(unflipped, samples, mnp.astype(count, dtype) - samples)


def binomial(key: Any, n: Any, p: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Binomial(n, p) counts as floats (default float32, float64 under x64): NaN for a NaN or
    negative ``n`` or an invalid ``p``, inf for an infinite ``n``."""
    key = single_key("binomial", key)
    check_arraylike("binomial", n, p)
    dtype = sample_dtype("binomial", dtype)
    if shape is not None:
        shape = concrete_shape("binomial", shape)
    return _binomial(key, n, p, shape, dtype)


def multinomial(key: Any, n: Any, p: Any, *, shape: Any = None, dtype: Any = None,
                unroll: int | bool = 1) -> Any:
    """Counts of ``n`` trials over the outcomes along the last axis of ``p``: a scan over the
    outcomes drawing binomial(remaining trials, p_i / remaining probability). ``shape`` (as in
    jax's code) is the full result shape, outcome axis included."""
    key = single_key("multinomial", key)
    check_arraylike("multinomial", n, p)
    n, p = promote_inexact(n, p)
    shape = tuple(p.shape) if shape is None else concrete_shape("multinomial", shape)
    n = mnp.broadcast_to(n, shape[:-1])
    p = mnp.moveaxis(mnp.broadcast_to(p, shape), -1, 0)
    remaining = lax.cumsum(p, 0, reverse=True)
    ratios = mnp.divide(p, mnp.where(mnp.equal(remaining, 0), 1, remaining))

    def draw(remainder: Any, ratio_key: tuple[Any, Any]) -> tuple[Any, Any]:
        ratio, k = ratio_key
        count = binomial(k, remainder, mnp.clip(ratio, 0, 1), dtype=remainder.dtype)
        return mnp.subtract(remainder, count), count

    _, counts = lax.scan(draw, n, (ratios, mlax.random.split(key, ratios.shape[0])), unroll=unroll)
    return mnp.astype(mnp.moveaxis(counts, 0, -1), sample_dtype("multinomial", dtype, None))
