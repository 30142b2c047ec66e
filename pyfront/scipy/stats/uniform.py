"""mlax.scipy.stats.uniform: the uniform distribution's density, CDF and quantile, as
jax.scipy.stats.uniform (the same formulas; arguments are promoted together to an inexact dtype
and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-log scale`` on [loc, loc + scale], -inf elsewhere."""
    x, loc, scale = promote_args_inexact("uniform.logpdf", x, loc, scale)
    return mnp.where((x > loc + scale) | (x < loc), -np.inf, -lax.log(scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logpdf)``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``(x - loc) / scale`` clipped to [0, 1] (0 for NaN)."""
    x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
    zero, one = np.array(0, x.dtype), np.array(1, x.dtype)
    inside = (x >= loc) & (x <= loc + scale)
    return mnp.select([x < loc, x > loc + scale, inside], [zero, one, (x - loc) / scale])


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``loc + scale q``; NaN outside [0, 1]."""
    q, loc, scale = promote_args_inexact("uniform.ppf", q, loc, scale)
    return mnp.where(mnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc + scale * q)
