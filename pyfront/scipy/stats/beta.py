"""mlax.scipy.stats.beta: the beta distribution's density and CDFs, as jax.scipy.stats.beta (the
same formulas; arguments are promoted together to an inexact dtype and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact
from mlax.scipy.special import betainc, betaln, xlog1py, xlogy

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``(a-1) log y + (b-1) log(1-y) - betaln(a, b) - log scale``, y = (x - loc) / scale."""
    x, a, b, loc, scale = promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    log_probs = -betaln(a, b) + (xlogy(a - 1, y) + xlog1py(b - 1, -y)) - lax.log(scale)
    result = mnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)
    return mnp.where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, result)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logpdf)``."""
    return lax.exp(logpdf(x, a, b, loc, scale))


def _clamped(name: str, x: Any, a: Any, b: Any, loc: Any, scale: Any) -> tuple[Any, ...]:
    x, a, b, loc, scale = promote_args_inexact(name, x, a, b, loc, scale)
    return a, b, lax.clamp(np.array(0, x.dtype), (x - loc) / scale, np.array(1, x.dtype))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``betainc(a, b, y)``, y clamped to [0, 1]."""
    a, b, y = _clamped("beta.cdf", x, a, b, loc, scale)
    return betainc(a, b, y)


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(cdf)``."""
    return lax.log(cdf(x, a, b, loc, scale))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``betainc(b, a, 1 - y)``."""
    a, b, y = _clamped("beta.sf", x, a, b, loc, scale)
    return betainc(b, a, 1 - y)


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(sf)``."""
    return lax.log(sf(x, a, b, loc, scale))
