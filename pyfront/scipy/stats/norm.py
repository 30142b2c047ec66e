"""mlax.scipy.stats.norm: the normal distribution's densities, CDFs and quantiles, as
jax.scipy.stats.norm (the same formulas and promotion: arguments are promoted together to an
inexact dtype; the CDFs go through ndtr / log_ndtr, the quantiles through ndtri)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import const_like, promote_args_inexact
from mlax.scipy.special import log_ndtr, ndtr, ndtri

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-(log(2 pi scale^2) + ((x - loc) / scale)^2) / 2``."""
    x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
    scale_sq = lax.mul(scale, scale)
    log_normalizer = lax.log(lax.mul(const_like(x, 2 * np.pi), scale_sq))
    diff = lax.sub(x, loc)
    quadratic = lax.div(lax.mul(diff, diff), scale_sq)
    return lax.div(lax.add(log_normalizer, quadratic), const_like(x, -2))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density, ``exp(logpdf)``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``ndtr((x - loc) / scale)``."""
    x, loc, scale = promote_args_inexact("norm.cdf", x, loc, scale)
    return ndtr(lax.div(lax.sub(x, loc), scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log_ndtr((x - loc) / scale)``: accurate far into both tails."""
    x, loc, scale = promote_args_inexact("norm.logcdf", x, loc, scale)
    return log_ndtr(lax.div(lax.sub(x, loc), scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function, ``ndtri(q) * scale + loc``, in the default float dtype as jax."""
    return mnp.asarray(mnp.add(mnp.multiply(ndtri(q), scale), loc), float)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function ``1 - cdf``, as ``cdf(-x, -loc, scale)`` (no cancellation)."""
    x, loc, scale = promote_args_inexact("norm.sf", x, loc, scale)
    return cdf(lax.neg(x), lax.neg(loc), scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(sf)``, as ``logcdf(-x, -loc, scale)``."""
    x, loc, scale = promote_args_inexact("norm.logsf", x, loc, scale)
    return logcdf(lax.neg(x), lax.neg(loc), scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse survival function, ``ppf(1 - q)``."""
    q = mnp.asarray(q)
    return ppf(lax.sub(const_like(q, 1), q), loc, scale)
