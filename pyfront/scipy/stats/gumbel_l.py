"""mlax.scipy.stats.gumbel_l: the left-skewed Gumbel distribution's density, CDFs and quantile, as
jax.scipy.stats.gumbel_l (the same formulas; arguments are promoted together to an inexact dtype
and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact
from mlax.scipy.special import xlog1py, xlogy

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _z(name: str, x: Any, loc: Any, scale: Any) -> tuple[Any, Any]:
    """z = (x - loc) / scale, and whether scale > 0 (NaN otherwise)."""
    x, loc, scale = promote_args_inexact(f"gumbel_l.{name}", x, loc, scale)
    return (x - loc) / scale, scale


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``z - e^z - log scale``."""
    z, scale = _z("logpdf", x, loc, scale)
    return mnp.where(scale > 0, xlogy(-1, scale) + (z - lax.exp(z)), np.nan)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logpdf)``."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(-expm1(-e^z))``."""
    z, scale = _z("logcdf", x, loc, scale)
    return mnp.where(scale > 0, lax.log(-lax.expm1(-lax.exp(z))), np.nan)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logcdf)``."""
    return lax.exp(logcdf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-e^z``."""
    z, scale = _z("logsf", x, loc, scale)
    return mnp.where(scale > 0, -lax.exp(z), np.nan)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logsf)``."""
    return mnp.exp(logsf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``loc + scale log(-log1p(-p))`` for p in (0, 1)."""
    p, loc, scale = promote_args_inexact("gumbel_l.ppf", p, loc, scale)
    return mnp.where((p > 0) & (p < 1), loc + scale * lax.log(xlog1py(-1, -p)), np.nan)
