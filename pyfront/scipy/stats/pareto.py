"""mlax.scipy.stats.pareto: the Pareto distribution's density, CDFs and quantile, as
jax.scipy.stats.pareto (the same formulas; arguments are promoted together to an inexact dtype
and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _args(name: str, x: Any, b: Any, loc: Any, scale: Any) -> tuple[Any, Any, Any, Any]:
    """y = (x - loc) / scale, b, whether x is below the support, and x."""
    x, b, loc, scale = promote_args_inexact(f"pareto.{name}", x, b, loc, scale)
    return (x - loc) / scale, b, x < loc + scale, x


def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(b / scale) - (b + 1) log y``."""
    x, b, loc, scale = promote_args_inexact("pareto.logpdf", x, b, loc, scale)
    y = (x - loc) / scale
    return mnp.where(x < loc + scale, -np.inf, -(lax.log(scale / b) + (b + 1) * lax.log(y)))


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logpdf)``."""
    return lax.exp(logpdf(x, b, loc, scale))


def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``1 - y^-b``."""
    y, b, below, x = _args("cdf", x, b, loc, scale)
    return mnp.where(below, np.array(0, x.dtype), np.array(1, x.dtype) - lax.pow(y, -b))


def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log1p(-y^-b)``."""
    y, b, below, _ = _args("logcdf", x, b, loc, scale)
    return mnp.where(below, -np.inf, lax.log1p(-lax.pow(y, -b)))


def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-b log y``."""
    y, b, below, x = _args("logsf", x, b, loc, scale)
    return mnp.where(below, np.array(0, x.dtype), -(b * lax.log(y)))


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logsf)``."""
    return lax.exp(logsf(x, b, loc, scale))


def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``loc + scale (1 - q)^(-1/b)``; NaN outside [0, 1]."""
    q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
    one = np.array(1, q.dtype)
    value = loc + scale * lax.pow(one - q, -(one / b))
    return mnp.where(mnp.isnan(q) | (q < 0) | (q > 1), np.nan, value)
