"""mlax.scipy.stats.betabinom: the beta-binomial distribution's pmf, as jax.scipy.stats.betabinom
(the same formulas; arguments are promoted together to an inexact dtype and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact
from mlax.scipy.special import betaln

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """``-log1p(n) - betaln(n - y + 1, y + 1) + betaln(y + a, n - y + b) - betaln(a, b)``,
    y = floor(k) - loc."""
    k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = lax.floor(k) - loc
    combiln = -(lax.log1p(n) + betaln(n - y + 1, y + 1))
    log_probs = combiln + (betaln(y + a, n - y + b) - betaln(a, b))
    log_probs = mnp.where((y == 0) & (n == 0), 0.0, log_probs)
    log_probs = mnp.where((y < -loc) | (y > n) | (y + a <= 0), -np.inf, log_probs)
    return mnp.where((n < 0) | (a <= 0) | (b <= 0), np.nan, log_probs)


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """``exp(logpmf)``."""
    return lax.exp(logpmf(k, n, a, b, loc))
