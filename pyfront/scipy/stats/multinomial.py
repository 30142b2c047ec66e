"""mlax.scipy.stats.multinomial: the multinomial distribution's pmf, as
jax.scipy.stats.multinomial (integer counts x over the last axis, n trials)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact, promote_dtypes
from mlax.scipy.special import gammaln, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(x: Any, n: Any, p: Any) -> Any:
    """``gammaln(n + 1) + sum(x log p - gammaln(x + 1))`` where the counts sum to n."""
    (p,) = promote_args_inexact("multinomial.logpmf", p)
    x, n = promote_dtypes(x, n)
    if x.dtype.kind not in "iu":
        raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, n.dtype={n.dtype}")
    # a non-scalar n gains leading axes up to x's rank, as jax's rank promotion (no broadcast)
    if n.ndim:
        n = mnp.reshape(n, (1,) * (x.ndim - n.ndim) + n.shape)
    x, n = x.astype(p.dtype), n.astype(p.dtype)
    log_probs = gammaln(n + 1) + mnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    return mnp.where(mnp.equal(mnp.sum(x), n), log_probs, -np.inf)


def pmf(x: Any, n: Any, p: Any) -> Any:
    """``exp(logpmf)``."""
    return lax.exp(logpmf(x, n, p))
