"""mlax.scipy.stats.wrapcauchy: the wrapped Cauchy distribution's density, as
jax.scipy.stats.wrapcauchy (the same formulas; arguments are promoted together to an inexact
dtype and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, c: Any) -> Any:
    """``log(1 - c^2) - log(2 pi) - log(1 + c^2 - 2 c cos x)`` on [0, 2 pi], for 0 < c < 1."""
    x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
    value = mnp.log(1 - c * c) - mnp.log(2 * np.pi) - mnp.log(1 + c * c - 2 * c * mnp.cos(x))
    inside = (x >= 0) & (x <= np.array(np.pi * 2, x.dtype))
    return mnp.where((c > 0) & (c < 1), mnp.where(inside, value, -np.inf), np.nan)


def pdf(x: Any, c: Any) -> Any:
    """``exp(logpdf)``."""
    return lax.exp(logpdf(x, c))
