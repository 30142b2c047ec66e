"""mlax.scipy.special (as jax.scipy.special): logsumexp, the special functions that mlax
has primitives for, and those composed from them as XLA expands jax's (gammaln, digamma in
lanczos.py; ndtr, log_ndtr, ndtri in ndtr.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.reductions import reduction_axes
from mlax.numpy.util import const_like, promote_args_inexact
from mlax.scipy.special.lanczos import digamma, gammaln
from mlax.scipy.special.ndtr import log_ndtr, ndtr, ndtri

__all__ = ["digamma", "erf", "erfc", "erfinv", "expit", "gammaln", "log_ndtr", "logit", "logsumexp", "ndtr",
           "ndtri", "xlog1py", "xlogy"]


def _inexact_unary(name: str, prim: str, doc: str) -> Any:
    def fn(x: Any) -> Any:
        (x,) = promote_args_inexact(name, x)
        return getattr(lax, prim)(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


erf = _inexact_unary("erf", "erf", "The error function.")
erfc = _inexact_unary("erfc", "erfc", "``1 - erf(x)``, accurate for large x.")
erfinv = _inexact_unary("erfinv", "erf_inv", "The inverse error function.")
expit = _inexact_unary("expit", "logistic", "The logistic sigmoid ``1 / (1 + exp(-x))``.")


def logit(x: Any) -> Any:
    """The inverse of ``expit``: ``log(x / (1 - x))``."""
    (x,) = promote_args_inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(const_like(x, 1), x)))


def _x_log(name: str, log_prim: str) -> Any:
    def fn(x: Any, y: Any) -> Any:
        x, y = promote_args_inexact(name, x, y)
        use = mnp.logical_or(mnp.not_equal(x, 0.0), mnp.isnan(y))
        return mnp.where(use, lax.mul(x, getattr(lax, log_prim)(y)), mnp.zeros_like(x))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``x * {log_prim}(y)``, defined as 0 where ``x == 0`` (unless y is NaN)."
    return fn


xlogy = _x_log("xlogy", "log")
xlog1py = _x_log("xlog1py", "log1p")


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False, return_sign: bool = False,
              where: Any = None) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis``, shifted by the maximum so it neither overflows nor
    underflows; with ``return_sign`` also the sign of the sum (needed when ``b`` has negatives)."""
    if where is not None:
        a = mnp.where(where, a, 0)
    if b is not None:
        a, b = promote_args_inexact("logsumexp", a, b)
        a = mnp.where(mnp.not_equal(b, 0), a, -np.inf)
    else:
        (a,) = promote_args_inexact("logsumexp", a)
    dims = reduction_axes("logsumexp", axis, a.ndim)
    amax = mnp.max(a, axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
    amax = lax.stop_gradient(mnp.where(mnp.isfinite(amax), amax, 0))
    amax_kept = amax if keepdims else lax.expand_dims(amax, dims)
    exp_a = mnp.exp(mnp.subtract(a, amax_kept))
    if b is not None:
        exp_a = lax.mul(exp_a, b)
    total = mnp.sum(exp_a, axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(total)
    out = lax.add(lax.log(lax.abs(total)), amax)
    if return_sign:
        return out, sign
    if b is not None:
        out = mnp.where(mnp.less(sign, 0), np.array(np.nan, out.dtype), out)
    return out
