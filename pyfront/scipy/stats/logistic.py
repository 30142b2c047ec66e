"""mlax.scipy.stats.logistic: the logistic distribution's density, CDFs and quantiles, as
jax.scipy.stats.logistic (the same formulas; arguments are promoted together to an inexact dtype
and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact
from mlax.scipy.special import expit, logit

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-2 logaddexp(z/2, -z/2) - log scale``."""
    x, loc, scale = promote_args_inexact("logistic.logpdf", x, loc, scale)
    z = (x - loc) / scale
    two = np.array(2, x.dtype)
    half_z = z / two
    return -two * mnp.logaddexp(half_z, -half_z) - lax.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logpdf)``."""
    return lax.exp(logpdf(x, loc, scale))


def ppf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``loc + scale logit(q)``."""
    x, loc, scale = promote_args_inexact("logistic.ppf", x, loc, scale)
    return logit(x) * scale + loc


def isf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``loc - scale logit(q)``."""
    x, loc, scale = promote_args_inexact("logistic.isf", x, loc, scale)
    return -logit(x) * scale + loc


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``expit(z)``."""
    x, loc, scale = promote_args_inexact("logistic.cdf", x, loc, scale)
    return expit((x - loc) / scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``expit(-z)``."""
    x, loc, scale = promote_args_inexact("logistic.sf", x, loc, scale)
    return expit(-((x - loc) / scale))
