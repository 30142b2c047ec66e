"""mlax.scipy.stats.t: Student's t distribution's density, as jax.scipy.stats.t (the same formulas;
arguments are promoted together to an inexact dtype and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax.numpy.util import promote_args_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``lgamma((df+1)/2) - lgamma(df/2) - log(pi df scale^2)/2 - (df+1)/2 log1p(z^2/df)``."""
    x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
    two = np.array(2, x.dtype)
    z = (x - loc) / scale
    half_df = df / two
    half_df_plus_half = half_df + np.array(0.5, x.dtype)
    log_normalizer = lax.log(scale * scale * np.array(np.pi, x.dtype) * df) / two
    normalizer = (lax.lgamma(half_df) + log_normalizer) - lax.lgamma(half_df_plus_half)
    return -(normalizer + half_df_plus_half * lax.log1p(z * z / df))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(logpdf)``."""
    return lax.exp(logpdf(x, df, loc, scale))
