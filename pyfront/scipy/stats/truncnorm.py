"""mlax.scipy.stats.truncnorm: the normal distribution truncated to [a, b] (in standard units),
as jax.scipy.stats.truncnorm: the log of the Gaussian mass between the bounds from log_ndtr in
the tails (a difference of logs) and from ndtr in the middle."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact
from mlax.scipy.special import log_ndtr, logsumexp, ndtr
from mlax.scipy.stats import norm

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _log_diff(x: Any, y: Any) -> Any:
    """``log(e^x - e^y)``."""
    return logsumexp(mnp.array([x, y]), b=mnp.array([mnp.ones_like(x), -mnp.ones_like(y)]), axis=0)


def _log_gauss_mass(a: Any, b: Any) -> Any:
    """``log(ndtr(b) - ndtr(a))`` without cancellation."""
    a, b = mnp.broadcast_arrays(mnp.array(a), mnp.array(b))
    left, right = b <= 0, a > 0
    tail = _log_diff(log_ndtr(mnp.where(right, -a, b)), log_ndtr(mnp.where(right, -b, a)))
    central = mnp.log1p(-ndtr(a) - ndtr(-b))
    return mnp.where(~(left | right), central, tail)


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``norm.logpdf - log mass(a, b)`` inside the bounds."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
    value = norm.logpdf(x, loc, scale) - _log_gauss_mass(a, b)
    z = (x - loc) / scale
    value = mnp.where((z < a) | (z > b), -np.inf, value)
    return mnp.where(a >= b, np.nan, value)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logpdf)``."""
    return lax.exp(logpdf(x, a, b, loc, scale))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log mass(a, z) - log mass(a, b)`` (through the survival mass near 1)."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = mnp.broadcast_arrays(x, a, b)
    z = (x - loc) / scale
    total = _log_gauss_mass(a, b)
    log_cdf = _log_gauss_mass(a, z) - total
    log_sf = _log_gauss_mass(z, b) - total
    value = mnp.select([z >= b, z <= a, log_cdf > -0.1, z > a],
                       [0, -np.inf, mnp.log1p(-mnp.exp(log_sf)), log_cdf])
    return mnp.where(a >= b, np.nan, value)


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logcdf)``."""
    return lax.exp(logcdf(x, a, b, loc, scale))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``logcdf(-x, -b, -a, -loc, scale)``."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logsf)``."""
    return lax.exp(logsf(x, a, b, loc, scale))
