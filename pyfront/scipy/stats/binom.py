"""mlax.scipy.stats.binom: the binomial distribution's pmf, as jax.scipy.stats.binom (the same
formulas; arguments are promoted together to an inexact dtype and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact
from mlax.scipy.special import gammaln, xlog1py, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``log C(n, y) + y log p + (n - y) log(1 - p)``, y = k - loc, -inf outside [0, n]."""
    k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = k - loc
    comb_term = gammaln(n + 1) - (gammaln(y + 1) + gammaln(n - y + 1))
    log_linear_term = xlogy(y, p) + xlog1py(n - y, -p)
    log_probs = mnp.where(((y == 0) & (n == 0)) | (log_linear_term == 0), 0.0, comb_term + log_linear_term)
    return mnp.where((k >= loc) & (k < loc + n + 1), log_probs, -np.inf)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``exp(logpmf)``."""
    return lax.exp(logpmf(k, n, p, loc))
