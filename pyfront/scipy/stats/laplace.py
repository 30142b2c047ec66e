"""mlax.scipy.stats.laplace: the Laplace distribution's density and CDF, as jax.scipy.stats.laplace
(the same formulas; arguments are promoted together to an inexact dtype and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax.numpy.util import promote_args_inexact

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-|x - loc| / scale - log(2 scale)``."""
    x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
    return -(lax.abs(x - loc) / scale + lax.log(np.array(2, x.dtype) * scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logpdf)``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``e^z / 2`` below loc, ``1 - e^-z / 2`` above."""
    x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
    z = (x - loc) / scale
    half, one = np.array(0.5, x.dtype), np.array(1, x.dtype)
    return lax.select(z <= 0, half * lax.exp(z), one - half * lax.exp(-z))
