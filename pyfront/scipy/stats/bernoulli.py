"""mlax.scipy.stats.bernoulli: the Bernoulli distribution's pmf, cdf and quantiles, as
jax.scipy.stats.bernoulli (the same formulas; arguments are promoted together to an inexact
dtype and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact
from mlax.scipy.special import xlog1py, xlogy

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``k log p + (1 - k) log(1 - p)`` at k - loc in {0, 1}, -inf elsewhere."""
    k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
    x = k - loc
    log_probs = xlogy(x, p) + xlog1py(1 - x, -p)
    return mnp.where((x < 0) | (x > 1), -np.inf, log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``exp(logpmf)``."""
    return mnp.exp(logpmf(k, p, loc))


def cdf(k: Any, p: Any) -> Any:
    """0 below 0, 1 - p on [0, 1), 1 from 1 on; NaN for p outside [0, 1]."""
    k, p = promote_args_inexact("bernoulli.cdf", k, p)
    bad = mnp.isnan(k) | mnp.isnan(p) | (p < 0) | (p > 1)
    return mnp.select([bad, k < 0, (k >= 0) & (k < 1), k >= 1],
                      [np.array(np.nan, k.dtype), np.array(0, k.dtype), 1 - p, np.array(1, k.dtype)])


def ppf(q: Any, p: Any) -> Any:
    """0 while q <= 1 - p, else 1; NaN outside the domain."""
    q, p = promote_args_inexact("bernoulli.ppf", q, p)
    bad = mnp.isnan(q) | mnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return mnp.where(bad, np.nan, mnp.where(q <= 1 - p, np.array(0, q.dtype), np.array(1, q.dtype)))
