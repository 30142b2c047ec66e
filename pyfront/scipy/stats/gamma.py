"""mlax.scipy.stats.gamma: the gamma distribution's density and CDFs, as jax.scipy.stats.gamma (the
same formulas; arguments are promoted together to an inexact dtype and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact
from mlax.scipy.special import gammainc, gammaincc, gammaln, xlogy

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``(a - 1) log y - y - gammaln(a) - log scale`` from loc on."""
    x, a, loc, scale = promote_args_inexact("gamma.logpdf", x, a, loc, scale)
    ok = x >= loc
    y = mnp.where(ok, (x - loc) / scale, np.array(1, x.dtype))
    log_probs = (xlogy(a - 1, y) - y) - (gammaln(a) + lax.log(scale))
    return mnp.where(ok, log_probs, -np.inf)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logpdf)``."""
    return lax.exp(logpdf(x, a, loc, scale))


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``gammainc(a, y)``, y clamped to [0, inf]."""
    x, a, loc, scale = promote_args_inexact("gamma.cdf", x, a, loc, scale)
    return gammainc(a, lax.clamp(np.array(0, x.dtype), (x - loc) / scale, np.array(np.inf, x.dtype)))


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(cdf)``."""
    return lax.log(cdf(x, a, loc, scale))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``gammaincc(a, y)``, 1 below loc."""
    x, a, loc, scale = promote_args_inexact("gamma.sf", x, a, loc, scale)
    y = (x - loc) / scale
    return mnp.where(y < 0, 1, gammaincc(a, y))


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(sf)``."""
    return lax.log(sf(x, a, loc, scale))
