"""mlax.scipy.stats.poisson: the Poisson distribution's pmf, CDF and entropy, as
jax.scipy.stats.poisson (the same formulas; arguments are promoted together to an inexact
dtype and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact, promote_dtypes, to_inexact_dtype
from mlax.scipy.special import entr, gammaincc, gammaln, xlogy

__all__ = ["cdf", "entropy", "logpmf", "pmf"]


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``x log mu - gammaln(x + 1) - mu`` for integer x = k - loc >= 0."""
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    x = k - loc
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return mnp.where((x < 0) | (mnp.round(k) != k), -np.inf, log_probs)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``exp(logpmf)``."""
    return mnp.exp(logpmf(k, mu, loc))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``gammaincc(floor(x + 1), mu)``, 0 below loc."""
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    x = k - loc
    return mnp.where(x < 0, np.array(0, k.dtype), gammaincc(mnp.floor(1 + x), mu))


def _entropy_sum(mu: Any, max_k: int, upper: Any) -> Any:
    """``sum_k entr(pmf(k))`` over k < min(max_k, upper)."""
    k = mnp.arange(max_k, dtype=mu.dtype)[:, None]
    probs = mnp.where(k < mnp.ceil(upper)[None, :], pmf(k, mu, 0), 0.0)
    return mnp.sum(entr(probs), axis=0)


def entropy(mu: Any, loc: Any = 0) -> Any:
    """The entropy: summed over the pmf below mu = 100, Stirling's expansion above."""
    mu, loc = (v.astype(to_inexact_dtype(v.dtype)) for v in promote_dtypes(mu, loc))
    shape = mnp.broadcast_shapes(mu.shape, loc.shape)
    flat = mnp.ravel(mu)
    large = 0.5 * mnp.log(2 * np.pi * np.e * flat) - 1.0 / (12 * flat)
    medium = _entropy_sum(flat, 250, flat + 10 * mnp.sqrt(flat) + 20)
    small = _entropy_sum(flat, 35, flat + 20)
    result = mnp.where(flat == 0, mnp.zeros_like(flat),
                       mnp.where(flat < 10, small, mnp.where(flat < 100, medium, large)))
    return mnp.broadcast_to(mnp.reshape(result, mu.shape), shape)
