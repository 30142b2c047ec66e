"""mlax.scipy.stats.cauchy: the Cauchy distribution's density, CDFs and quantiles, as
jax.scipy.stats.cauchy (the same formulas; arguments are promoted together to an inexact dtype
and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-log(pi scale) - log1p(z^2)``, z = (x - loc) / scale."""
    x, loc, scale = promote_args_inexact("cauchy.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -(lax.log(np.array(np.pi, x.dtype) * scale) + lax.log1p(z * z))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logpdf)``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``1/2 + atan(z) / pi``."""
    x, loc, scale = promote_args_inexact("cauchy.cdf", x, loc, scale)
    z = (x - loc) / scale
    return np.array(0.5, x.dtype) + np.array(1.0, x.dtype) / np.array(np.pi, x.dtype) * mnp.arctan(z)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(cdf)``."""
    return lax.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``cdf(-x, -loc, scale)``."""
    x, loc, scale = promote_args_inexact("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``logcdf(-x, -loc, scale)``."""
    x, loc, scale = promote_args_inexact("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def _quantile(name: str, sign: int) -> Any:
    def fn(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
        q, loc, scale = promote_args_inexact(f"cauchy.{name}", q, loc, scale)
        angle = np.array(np.pi, q.dtype) * q - np.array(np.pi / 2, q.dtype)
        return lax.tan(angle if sign > 0 else -angle) * scale + loc

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = "``loc + scale tan(pi q - pi/2)``." if sign > 0 else "``loc + scale tan(pi/2 - pi q)``."
    return fn


ppf = _quantile("ppf", 1)
isf = _quantile("isf", -1)
