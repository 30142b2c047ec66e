"""mlax.scipy.stats.dirichlet: the Dirichlet distribution's density, as
jax.scipy.stats.dirichlet (x's first axis runs over the categories; it may omit the last)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_dtypes, to_inexact_dtype
from mlax.scipy.special import gammaln, xlogy

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, alpha: Any) -> Any:
    """``sum (alpha - 1) log x - (sum gammaln(alpha) - gammaln(sum alpha))`` on the simplex."""
    x, alpha = (v.astype(to_inexact_dtype(v.dtype)) for v in promote_dtypes(x, alpha))
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one entry fewer; "
                         f"got x.shape={x.shape}, alpha.shape={alpha.shape}")
    if x.shape[0] != alpha.shape[0]:
        x = mnp.concatenate([x, 1 - x.sum(0, keepdims=True)], axis=0)
    normalizer = mnp.sum(gammaln(alpha)) - gammaln(mnp.sum(alpha))
    if x.ndim > 1:
        alpha = lax.broadcast_in_dim(alpha, alpha.shape + (1,) * (x.ndim - 1), (0,))
    log_probs = mnp.sum(xlogy(alpha - 1, x), axis=0) - normalizer
    simplex = mnp.all(x > 0, axis=0) & (abs(mnp.sum(x, axis=0) - 1) < 1e-6)
    return mnp.where(simplex, log_probs, -np.inf)


def pdf(x: Any, alpha: Any) -> Any:
    """``exp(logpdf)``."""
    return lax.exp(logpdf(x, alpha))
