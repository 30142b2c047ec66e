"""mlax.scipy.stats.chi2: the chi-squared distribution's density and CDFs, as jax.scipy.stats.chi2
(the same formulas; arguments are promoted together to an inexact dtype and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact
from mlax.scipy.special import gammainc, gammaincc

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``(df/2 - 1) log y - y/2 - lgamma(df/2) - df log(2)/2 - log scale``."""
    x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    two = np.array(2, x.dtype)
    y = (x - loc) / scale
    half_df = df / two
    kernel = (half_df - 1) * lax.log(y) - y / two
    normalizer = -(lax.lgamma(half_df) + lax.log(two) * df / two)
    return mnp.where(x < loc, -np.inf, (normalizer - lax.log(scale)) + kernel)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logpdf)``."""
    return lax.exp(logpdf(x, df, loc, scale))


def _incomplete(name: str, upper: bool) -> Any:
    def fn(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
        x, df, loc, scale = promote_args_inexact(f"chi2.{name}", x, df, loc, scale)
        two = np.array(2, x.dtype)
        y = lax.clamp(np.array(0, x.dtype), (x - loc) / (scale * two), np.array(np.inf, x.dtype))
        return (gammaincc if upper else gammainc)(df / two, y)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{'gammaincc' if upper else 'gammainc'}(df / 2, y / 2)``."
    return fn


cdf = _incomplete("cdf", False)
sf = _incomplete("sf", True)


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(cdf)``."""
    return lax.log(cdf(x, df, loc, scale))


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(sf)``."""
    return lax.log(sf(x, df, loc, scale))
