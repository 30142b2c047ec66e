"""mlax.scipy.stats.gumbel_r: the right-skewed Gumbel distribution's density, CDFs and quantile, as
jax.scipy.stats.gumbel_r (the same formulas; arguments are promoted together to an inexact dtype
and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact
from mlax.scipy.special import xlogy

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _neg_z(name: str, x: Any, loc: Any, scale: Any) -> tuple[Any, Any, Any]:
    """-z = (loc - x) / scale, scale (NaN unless positive) and x."""
    x, loc, scale = promote_args_inexact(f"gumbel_r.{name}", x, loc, scale)
    return (loc - x) / scale, scale, x


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-(z + e^-z) - log scale``."""
    x, loc, scale = promote_args_inexact("gumbel_r.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return mnp.where(scale > 0, xlogy(-1, scale) + -(z + lax.exp(-z)), np.nan)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logpdf)``."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-e^-z``."""
    x, loc, scale = promote_args_inexact("gumbel_r.logcdf", x, loc, scale)
    z = (x - loc) / scale
    return mnp.where(scale > 0, -lax.exp(-z), np.nan)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logcdf)``."""
    return lax.exp(logcdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``1 - exp(-e^-z)``."""
    neg_z, scale, x = _neg_z("sf", x, loc, scale)
    return mnp.where(scale > 0, np.array(1, x.dtype) - lax.exp(-lax.exp(neg_z)), np.nan)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(1 - exp(-e^-z))``, without cancellation."""
    neg_z, scale, _ = _neg_z("logsf", x, loc, scale)
    t = lax.exp(neg_z)
    log1mexp = mnp.where(t < np.log(2.0), lax.log(-lax.expm1(-t)), lax.log1p(-lax.exp(-t)))
    return mnp.where(scale > 0, log1mexp, np.nan)


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``loc - scale log(-log p)`` for p in (0, 1)."""
    p, loc, scale = promote_args_inexact("gumbel_r.ppf", p, loc, scale)
    return mnp.where((p > 0) & (p < 1), loc - scale * lax.log(xlogy(-1, p)), np.nan)
