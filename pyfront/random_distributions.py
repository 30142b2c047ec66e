"""The distributions of jax.random beyond uniform/normal/bits, on mlax.random's public
functions (split, uniform, normal, bernoulli) and mlax.numpy, so that code written for jax
(flax.nnx binds every one of them at import) runs on mlax and draws jax's values.

Each sampler is jax 0.10.2's derivation step for step: the same transform of the same
uniform or normal draws, the same key splits and the same dtype of every intermediate, so the
same key gives jax's samples (bit for bit for the pure bit manipulations, within a few ulp
where a transcendental function rounds differently; see docs/random.md). The samplers built
on rejection loops (gamma, poisson, binomial, multinomial) live in mlax.random_rejection and
are re-exported here. mlax.random imports this module's names, so ``mlax.random.gamma`` works.

``orthogonal`` and ``multivariate_normal`` factor matrices with mlax.numpy.linalg (QR; Cholesky,
SVD or eigh), as jax.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import mlax
from mlax import lax
from mlax import numpy as mnp
from mlax.errors import user_error
from mlax.numpy.util import promote_dtypes_inexact
from mlax.random_arguments import (
    broadcast_param_shapes,
    check_arraylike,
    check_safe_cast,
    check_shape,
    concrete_shape,
    param_shape,
    promote_inexact,
    sample_dtype,
    sample_shape,
    single_key,
)
from mlax.random_rejection import binomial, gamma, loggamma, multinomial, poisson

__all__ = [
    "ball", "beta", "binomial", "cauchy", "chisquare", "dirichlet", "double_sided_maxwell", "exponential",
    "f", "gamma", "generalized_normal", "geometric", "laplace", "loggamma", "logistic", "lognormal",
    "maxwell", "multinomial", "multivariate_normal", "orthogonal", "pareto", "poisson", "rademacher",
    "rayleigh", "t", "triangular", "wald", "weibull_min",
]


def _as(x: Any, dtype: np.dtype) -> Any:
    return lax.convert_element_type(x, dtype)


def _float_sampler(name: str, key: Any, dtype: Any) -> tuple[Any, np.dtype]:
    return single_key(name, key), sample_dtype(name, dtype)


# -- transforms of one uniform draw ---------------------------------------------------------------

def cauchy(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard Cauchy: ``tan(pi (u - 1/2))``, u uniform in [eps, 1)."""
    key, dtype = _float_sampler("cauchy", key, dtype)
    shape = concrete_shape("cauchy", shape)
    u = mlax.random.uniform(key, shape, dtype, minval=mnp.finfo(dtype).eps, maxval=1.0)
    return lax.tan(lax.mul(np.array(np.pi, dtype), lax.sub(u, np.array(0.5, dtype))))


def _exponential(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return lax.neg(lax.log1p(lax.neg(mlax.random.uniform(key, shape, dtype))))  # log of 1 - u in (0, 1]


def exponential(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard exponential: ``-log(1 - u)``."""
    key, dtype = _float_sampler("exponential", key, dtype)
    return _exponential(key, concrete_shape("exponential", shape), dtype)


def laplace(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard Laplace: ``sign(u) log(1 - |u|)``, u uniform in (-1, 1)."""
    key, dtype = _float_sampler("laplace", key, dtype)
    minval = -1.0 + float(mnp.finfo(dtype).epsneg)
    u = mlax.random.uniform(key, concrete_shape("laplace", shape), dtype, minval=minval, maxval=1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def logistic(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard logistic: ``log(u) - log(1 - u)``, u uniform in [tiny, 1)."""
    key, dtype = _float_sampler("logistic", key, dtype)
    shape = concrete_shape("logistic", shape)
    x = mlax.random.uniform(key, shape, dtype, minval=mnp.finfo(dtype).tiny, maxval=1.0)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


def pareto(key: Any, b: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Pareto with shape ``b`` and unit scale: ``exp(e / b)``, e standard exponential."""
    key, dtype = _float_sampler("pareto", key, dtype)
    shape = sample_shape("pareto", shape, b)
    check_safe_cast("pareto", dtype, b)
    return lax.exp(mnp.divide(_exponential(key, shape, dtype), _as(b, dtype)))


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Weibull by the inverse CDF: ``(-log(1 - u))^(1 / concentration) * scale``."""
    key, dtype = _float_sampler("weibull_min", key, dtype)
    u = mlax.random.uniform(key, concrete_shape("weibull_min", shape), dtype, minval=0, maxval=1)
    return mnp.power(-mnp.log1p(-u), mnp.divide(1.0, concentration)) * scale


def rayleigh(key: Any, scale: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Rayleigh: ``scale * sqrt(-2 log u)``."""
    key, dtype = _float_sampler("rayleigh", key, dtype)
    shape = sample_shape("rayleigh", shape, scale)
    check_safe_cast("rayleigh", dtype, scale)
    u = mlax.random.uniform(key, shape, dtype)
    scale = mnp.broadcast_to(_as(scale, dtype), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), np.array(-2, dtype))))


def geometric(key: Any, p: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Trials to the first success: ``floor(log u / log(1 - p)) + 1`` (integers, default int32,
    drawn in p's float dtype; u = 0 is read as 1, as in jax)."""
    key = single_key("geometric", key)
    dtype = sample_dtype("geometric", dtype, np.integer, np.int64)
    shape = sample_shape("geometric", shape, p)
    check_arraylike("geometric", p)
    (p,) = promote_inexact(p)
    u = mlax.random.uniform(key, shape, p.dtype)
    u = mnp.where(mnp.equal(u, 0), 1, u)
    log_one_minus_p = mnp.broadcast_to(lax.log1p(lax.neg(p)), shape)
    return mnp.astype(mnp.add(lax.floor(lax.div(lax.log(u), log_one_minus_p)), 1), dtype)


def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Triangular on [left, right] peaking at ``mode``, by the inverse CDF on either side."""
    key, dtype = _float_sampler("triangular", key, dtype)
    shape = sample_shape("triangular", shape, left, mode, right)
    check_safe_cast("triangular", dtype, left, mode, right)
    left, mode, right = (mnp.broadcast_to(_as(v, dtype), shape) for v in (left, mode, right))
    width = lax.sub(right, left)
    fc = lax.div(lax.sub(mode, left), width)
    u = mlax.random.uniform(key, shape, dtype)
    out1 = lax.add(left, lax.sqrt(lax.mul(lax.mul(u, width), lax.sub(mode, left))))
    out2 = lax.sub(right, lax.sqrt(lax.mul(lax.mul(1 - u, width), lax.sub(right, mode))))
    return lax.select(lax.lt(u, fc), out1, out2)


# -- transforms of normal draws ---------------------------------------------------------------------

_ONE = np.float32(1)


def lognormal(key: Any, sigma: Any = _ONE, shape: Any = None, dtype: Any = None) -> Any:
    """``exp(sigma * n)``, n standard normal."""
    key = single_key("lognormal", key)
    dtype = sample_dtype("lognormal", dtype, np.inexact)
    shape = sample_shape("lognormal", shape, sigma)
    check_safe_cast("lognormal", dtype, sigma)
    return lax.exp(mnp.multiply(mlax.random.normal(key, shape, dtype), _as(sigma, dtype)))


def _maxwell(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    n = mlax.random.normal(key, (*shape, 3), dtype)
    return mnp.sqrt(mnp.sum(mnp.multiply(n, n), axis=-1))  # jnp.linalg.norm(n, axis=-1)


def maxwell(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Maxwell (the speed of a 3-d standard normal vector): ``|n|`` for n of 3 normals."""
    key, dtype = _float_sampler("maxwell", key, dtype)
    return _maxwell(key, concrete_shape("maxwell", shape), dtype)


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Any = (), dtype: Any = None) -> Any:
    """``loc + scale * s * m``, m Maxwell and s a random sign. As jax, the result shape is
    ``shape + broadcast(loc, scale).shape`` (and that shape twice when ``shape`` is empty)."""
    key, dtype = _float_sampler("double_sided_maxwell", key, dtype)
    shape = concrete_shape("double_sided_maxwell", shape)
    params = tuple(np.broadcast_shapes(param_shape(loc), param_shape(scale)))
    shape = (shape or params) + params
    maxwell_key, sign_key = mlax.random.split(key)
    signs = rademacher(sign_key, shape, dtype)
    return mnp.add(mnp.multiply(mnp.multiply(signs, _maxwell(maxwell_key, shape, dtype)), scale), loc)


def wald(key: Any, mean: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Inverse Gaussian with unit shape (Michael, Schucany and Haas's transformation)."""
    key, dtype = _float_sampler("wald", key, dtype)
    shape = sample_shape("wald", shape, mean)
    check_safe_cast("wald", dtype, mean)
    k1, k2 = mlax.random.split(key)
    mean = mnp.broadcast_to(_as(mean, dtype), shape)
    v = mlax.random.normal(k1, shape, dtype)
    z = mlax.random.uniform(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = mnp.sqrt(mnp.add(mnp.multiply(mnp.multiply(4, mean), y), mnp.multiply(mean_sq, y_sq)))
    x = mnp.subtract(mnp.add(mean, mnp.divide(mnp.multiply(mean_sq, y), 2)),
                     mnp.multiply(mnp.divide(mean, 2), sqrt_term))
    return lax.select(lax.le(z, mnp.divide(mean, mnp.add(mean, x))), x, mnp.divide(mean_sq, x))


# -- signs ------------------------------------------------------------------------------------------

def rademacher(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """-1 or 1 with equal probability (default int32; any dtype): ``2 bernoulli(1/2) - 1``."""
    key = single_key("rademacher", key)
    dtype = sample_dtype("rademacher", dtype, None, np.int64)
    samples = mnp.astype(mlax.random.bernoulli(key, 0.5, concrete_shape("rademacher", shape)), dtype)
    return mnp.astype(mnp.subtract(mnp.multiply(2, samples), 1), dtype)


# -- built on gamma ---------------------------------------------------------------------------------

def beta(key: Any, a: Any, b: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Beta(a, b) as ``G_a / (G_a + G_b)`` of two gamma draws, in log space so that small
    parameters keep their precision; differentiable in a and b."""
    key, dtype = _float_sampler("beta", key, dtype)
    check_safe_cast("beta", dtype, a, b)
    shape = sample_shape("beta", shape, a, b)
    key_a, key_b = mlax.random.split(key)
    a, b = (mnp.broadcast_to(_as(v, dtype), shape) for v in (a, b))
    log_a, log_b = loggamma(key_a, a, shape, dtype), loggamma(key_b, b, shape, dtype)
    log_max = lax.max(log_a, log_b)
    scaled_a, scaled_b = mnp.exp(mnp.subtract(log_a, log_max)), mnp.exp(mnp.subtract(log_b, log_max))
    return mnp.divide(scaled_a, mnp.add(scaled_a, scaled_b))


def dirichlet(key: Any, alpha: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Dirichlet(alpha) over the last axis: the softmax of log-gamma draws. ``shape`` is the
    batch shape, without the last axis."""
    from mlax.nn import softmax

    key, dtype = _float_sampler("dirichlet", key, dtype)
    if shape is not None:
        shape = concrete_shape("dirichlet", shape)
    alpha_shape = param_shape(alpha)
    if len(alpha_shape) < 1:
        raise user_error(ValueError, "dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{len(alpha_shape)}", "alpha of mlax.random.dirichlet")
    if shape is None:
        shape = alpha_shape[:-1]
    else:
        check_shape("dirichlet", shape, alpha_shape[:-1])
    log_gamma = loggamma(key, _as(alpha, dtype), shape + alpha_shape[-1:], dtype)
    return softmax(log_gamma, -1)


def t(key: Any, df: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Student's t with ``df`` degrees of freedom: ``n * sqrt(df / 2 / g)``, g ~ Gamma(df / 2)."""
    key, dtype = _float_sampler("t", key, dtype)
    shape = sample_shape("t", shape, df)
    check_safe_cast("t", dtype, df)
    key_n, key_g = mlax.random.split(key)
    n = mlax.random.normal(key_n, shape, dtype)
    half_df = lax.div(_as(df, dtype), np.array(2, dtype))
    g = gamma(key_g, half_df, shape, dtype)
    return mnp.multiply(n, mnp.sqrt(mnp.divide(half_df, g)))


def _chisquare(key: Any, df: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    two = np.array(2, dtype)
    return lax.mul(mnp.exp(loggamma(key, lax.div(_as(df, dtype), two), shape, dtype)), two)


def chisquare(key: Any, df: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Chi-squared with ``df`` degrees of freedom: ``2 Gamma(df / 2)`` (drawn in log space)."""
    key, dtype = _float_sampler("chisquare", key, dtype)
    shape = sample_shape("chisquare", shape, df)
    check_safe_cast("chisquare", dtype, df)
    return _chisquare(key, df, shape, dtype)


def f(key: Any, dfnum: Any, dfden: Any, shape: Any = None, dtype: Any = None) -> Any:
    """F(dfnum, dfden): the ratio of two chi-squared draws, each over its degrees of freedom."""
    key, dtype = _float_sampler("f", key, dtype)
    shape = sample_shape("f", shape, dfnum, dfden)
    check_safe_cast("f", dtype, dfnum, dfden)
    dfnum, dfden = _as(dfnum, dtype), _as(dfden, dtype)
    key_dfd, key_dfn = mlax.random.split(key)
    num = lax.div(_chisquare(key_dfn, dfnum, shape, dtype), dfnum)
    den = lax.div(_chisquare(key_dfd, dfden, shape, dtype), dfden)
    return lax.div(num, den)


def _generalized_normal(key: Any, p: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    keys = mlax.random.split(key)
    g = gamma(keys[0], mnp.divide(1, p), shape, dtype)
    r = rademacher(keys[1], shape, dtype)
    return mnp.multiply(r, mnp.power(g, mnp.divide(1, p)))


def generalized_normal(key: Any, p: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Generalized normal with exponent ``p`` (density ~ exp(-|x|^p)): ``s * G^(1/p)`` for
    G ~ Gamma(1/p) and a random sign s."""
    shape = concrete_shape("generalized_normal", shape)
    key = single_key("generalized_normal", key)
    return _generalized_normal(key, p, shape, sample_dtype("generalized_normal", dtype, None))


def ball(key: Any, d: int, p: Any = 2, shape: Any = (), dtype: Any = None) -> Any:
    """Uniform points of the unit ``p``-norm ball in ``d`` dimensions (shape ``shape + (d,)``),
    by Barthe, Guedon, Mendelson and Naor's construction."""
    shape = concrete_shape("ball", shape)
    key = single_key("ball", key)
    dtype = sample_dtype("ball", dtype, None)
    d = _concrete_int("ball", "d", d)
    k1, k2 = mlax.random.split(key)
    g = _generalized_normal(k1, p, (*shape, d), dtype)
    e = _exponential(k2, shape, dtype)
    radius = mnp.power(mnp.add(mnp.sum(mnp.power(mnp.abs(g), p), axis=-1), e), mnp.divide(1, p))
    return mnp.divide(g, mnp.expand_dims(radius, -1))


def _concrete_int(name: str, argument: str, value: Any) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise user_error(TypeError, f"{argument} must be a concrete integer, got {value!r}",
                         f"{argument} of mlax.random.{name}") from None


# -- the samplers that need a matrix factorization -------------------------------------------------

def orthogonal(key: Any, n: int, shape: Any = (), dtype: Any = None, m: int | None = None) -> Any:
    """Haar-random n x m matrices with orthonormal rows or columns (Mezzadri 2007, as jax: the Q of
    a QR of normals, its columns' signs made those of R's diagonal)."""
    shape = concrete_shape("orthogonal", shape)
    key = single_key("orthogonal", key)
    dtype = sample_dtype("orthogonal", dtype, None)
    n = _concrete_int("orthogonal", "n", n)
    m = n if m is None else _concrete_int("orthogonal", "m", m)
    z = mlax.random.normal(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = mnp.linalg.qr(z)
    x = q * mnp.expand_dims(mnp.sign(mnp.linalg.diagonal(r)), -2)
    return mnp.matrix_transpose(x) if n < m else x


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Any = None, dtype: Any = None,
                        method: str = "cholesky") -> Any:
    """Multivariate normal draws ``mean + factor(cov) @ n`` for standard normals n, the factor
    cov's Cholesky factor (jax's default method), ``u sqrt(s)`` of its SVD or ``v sqrt(w)`` of
    its eigendecomposition."""
    if method not in {"svd", "eigh", "cholesky"}:
        raise user_error(ValueError, "method must be one of {'svd', 'eigh', 'cholesky'}",
                         "method of mlax.random.multivariate_normal")
    key = single_key("multivariate_normal", key)
    mean, cov = promote_dtypes_inexact(mean, cov)
    dtype = mean.dtype if dtype is None else sample_dtype("multivariate_normal", dtype)
    mean_shape, cov_shape = param_shape(mean), param_shape(cov)
    if len(mean_shape) < 1:
        raise user_error(ValueError, f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{len(mean_shape)}", "mean of mlax.random.multivariate_normal")
    if len(cov_shape) < 2:
        raise user_error(ValueError, f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{len(cov_shape)}", "cov of mlax.random.multivariate_normal")
    n = mean_shape[-1]
    if cov_shape[-2:] != (n, n):
        raise user_error(ValueError, f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but "
                         f"got cov.shape == {cov_shape}.", "cov of mlax.random.multivariate_normal")
    if shape is None:
        shape = broadcast_param_shapes("multivariate_normal", mean_shape[:-1], cov_shape[:-2])
    else:
        shape = concrete_shape("multivariate_normal", shape)
        check_shape("normal", shape, mean_shape[:-1], cov_shape[:-2])
    if method == "svd":
        u, s, _ = mnp.linalg.svd(cov)
        factor = u * mnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = mnp.linalg.eigh(cov)
        factor = v * mnp.sqrt(w[..., None, :])
    else:
        factor = mnp.linalg.cholesky(cov)
    samples = mlax.random.normal(key, (*shape, n), dtype)
    return mean + mnp.einsum("...ij,...j->...i", factor, samples)

