"""mlax.scipy.stats.expon: the exponential distribution's density, CDFs and quantile, as
jax.scipy.stats.expon (the same formulas; arguments are promoted together to an inexact dtype
and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-(x - loc) / scale - log scale`` from loc on."""
    x, loc, scale = promote_args_inexact("expon.logpdf", x, loc, scale)
    return mnp.where(x < loc, -np.inf, -((x - loc) / scale + lax.log(scale)))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logpdf)``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-expm1(-(x - loc) / scale)``."""
    x, loc, scale = promote_args_inexact("expon.cdf", x, loc, scale)
    neg_z = (loc - x) / scale
    return mnp.where(x < loc, mnp.zeros_like(neg_z), -lax.expm1(neg_z))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-(x - loc) / scale``, 0 below loc."""
    x, loc, scale = promote_args_inexact("expon.sf", x, loc, scale)
    neg_z = (loc - x) / scale
    return mnp.where(x < loc, mnp.zeros_like(neg_z), neg_z)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logsf)``."""
    return lax.exp(logsf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log1p(-sf)``."""
    return lax.log1p(-sf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``loc - scale log1p(-q)``; NaN outside [0, 1]."""
    q, loc, scale = promote_args_inexact("expon.ppf", q, loc, scale)
    return mnp.where(mnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc - scale * lax.log1p(-q))
