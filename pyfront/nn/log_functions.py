"""mlax.nn log1mexp and logmeanexp (as jax.nn): logarithms of sums of exponentials that stay
accurate where the direct formula cancels or overflows."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import numpy as mnp
from mlax.core import is_array_like
from mlax.custom_derivatives import custom_jvp
from mlax.scipy.special import logsumexp


@custom_jvp
def log1mexp(x: Any) -> Any:
    """``log(1 - exp(-x))`` for x >= 0: through ``expm1`` below log 2, ``log1p`` above (Maechler's
    split, where each form is accurate); the derivative is ``1 / expm1(x)``."""
    if not is_array_like(x):
        raise TypeError(f"mlax.nn.log1mexp requires ndarray or scalar arguments, got {type(x).__name__}")
    return mnp.where(mnp.less(x, np.log(2.0)), mnp.log(mnp.negative(mnp.expm1(mnp.negative(x)))),
                     mnp.log1p(mnp.negative(mnp.exp(mnp.negative(x)))))


log1mexp.defjvps(lambda g, ans, x: mnp.true_divide(g, mnp.expm1(x)))


def logmeanexp(x: Any, axis: Any = None, where: Any = None, keepdims: bool = False) -> Any:
    """``log(mean(exp(x)))`` over ``axis`` (the elements ``where`` selects): logsumexp minus
    the log of the count."""
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    ones = mnp.ones_like(x, dtype=lse.dtype)
    count = mnp.sum(ones, axis=axis, where=where, keepdims=keepdims, dtype=lse.dtype)
    return mnp.subtract(lse, mnp.log(count))


__all__ = ["log1mexp", "logmeanexp"]
