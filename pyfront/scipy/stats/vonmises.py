"""mlax.scipy.stats.vonmises: the von Mises distribution's density, as jax.scipy.stats.vonmises
(the same formulas; arguments are promoted together to an inexact dtype and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, kappa: Any) -> Any:
    """``kappa (cos x - 1) - log(2 pi i0e(kappa))`` for kappa > 0."""
    x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
    value = kappa * (mnp.cos(x) - 1) - mnp.log(2 * np.pi * lax.bessel_i0e(kappa))
    return mnp.where(kappa > 0, value, np.nan)


def pdf(x: Any, kappa: Any) -> Any:
    """``exp(logpdf)``."""
    return lax.exp(logpdf(x, kappa))
