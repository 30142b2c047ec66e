"""mlax.scipy.stats.multivariate_normal: the multivariate normal density, as jax's.

A scalar ``mean`` is the univariate normal; a scalar ``cov`` with a vector mean an isotropic one;
a matrix ``cov`` (batches broadcast against ``x`` and ``mean``) is factored ``L L^T`` by Cholesky,
so the quadratic form is ``|L^-1 (x - mean)|^2`` and the log-determinant ``2 sum(log diag L)``.
A ``cov`` that is not positive definite gives NaN (jax does not take ``allow_singular``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import mlax.numpy as mnp
from mlax import lax
from mlax.numpy.util import promote_dtypes_inexact

__all__ = ["logpdf", "pdf"]

# L^-1 y for each factor L and vector y, their batch dimensions broadcast.
_whiten = mnp.vectorize(lambda factor, y: lax.linalg.triangular_solve(factor, y, lower=True,
                                                                      transpose_a=True),
                        signature="(n,n),(n)->(n)")


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: None = None) -> Any:
    """The log density of ``x`` under N(mean, cov), over the last axis of ``x`` and ``mean``."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_dtypes_inexact(x, mean, cov)
    log_2pi = mnp.log(2 * np.pi)
    if not mean.shape:
        return -1 / 2 * mnp.square(x - mean) / cov - 1 / 2 * (log_2pi + mnp.log(cov))
    n = mean.shape[-1]
    if not cov.shape:
        y = x - mean
        return -1 / 2 * mnp.einsum("...i,...i->...", y, y) / cov - n / 2 * (log_2pi + mnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    factor = lax.linalg.cholesky(cov)
    y = _whiten(factor, x - mean)
    return (-1 / 2 * mnp.einsum("...i,...i->...", y, y) - n / 2 * log_2pi
            - mnp.log(mnp.diagonal(factor, axis1=-1, axis2=-2)).sum(-1))


def pdf(x: Any, mean: Any, cov: Any) -> Any:
    """The density, ``exp(logpdf)``."""
    return lax.exp(logpdf(x, mean, cov))
