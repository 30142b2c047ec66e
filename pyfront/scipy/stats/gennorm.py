"""mlax.scipy.stats.gennorm: the generalized normal distribution's density and CDF, as
jax.scipy.stats.gennorm (the same formulas; arguments are promoted together to an inexact dtype
and broadcast)."""

from __future__ import annotations

from typing import Any

from mlax import lax
from mlax.numpy.util import promote_args_inexact

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x: Any, beta: Any) -> Any:
    """``log(beta / 2) - lgamma(1 / beta) - |x|^beta``."""
    x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
    return lax.log(0.5 * beta) - lax.lgamma(1 / beta) - lax.abs(x) ** beta


def cdf(x: Any, beta: Any) -> Any:
    """``(1 + sign(x) P(1 / beta, |x|^beta)) / 2``."""
    x, beta = promote_args_inexact("gennorm.cdf", x, beta)
    return 0.5 * (1 + lax.sign(x) * lax.igamma(1 / beta, lax.abs(x) ** beta))


def pdf(x: Any, beta: Any) -> Any:
    """``exp(logpdf)``."""
    return lax.exp(logpdf(x, beta))
