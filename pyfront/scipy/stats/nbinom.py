"""mlax.scipy.stats.nbinom: the negative binomial distribution's pmf, as jax.scipy.stats.nbinom
(the same formulas; arguments are promoted together to an inexact dtype and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact
from mlax.scipy.special import gammaln, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``log C(y + n - 1, y) + n log p + y log(1 - p)``, y = k - loc."""
    k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    comb_term = (gammaln(y + n) - gammaln(n)) - gammaln(y + 1)
    log_linear_term = xlogy(n, p) + xlogy(y, 1 - p)
    return mnp.where(k < loc, -np.inf, comb_term + log_linear_term)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``exp(logpmf)``."""
    return lax.exp(logpmf(k, n, p, loc))
