"""Logarithmic building blocks of mlax.scipy.special (as jax.scipy.special): xlogy, xlog1py,
entr, rel_entr, kl_div, the Box-Cox transforms, and softmax / log_softmax over ``axis``
(mlax.nn's). xlogy, xlog1py and x log x carry jax's custom derivatives, so gradients at
x = 0 are what jax gives.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.custom_derivatives import custom_jvp
from mlax.numpy.util import promote_args_inexact

__all__ = ["boxcox", "boxcox1p", "entr", "kl_div", "log_softmax", "rel_entr", "softmax", "xlog1py", "xlogy"]


def _x_log(name: str, log_prim: str) -> Any:
    """``x * log(y)`` (or log1p), 0 where x == 0 unless y is NaN, with jax's derivative
    ``(log(y) dx + x / y dy)``."""
    log = getattr(lax, log_prim)

    @custom_jvp
    def fn(x: Any, y: Any) -> Any:
        x, y = promote_args_inexact(name, x, y)
        use = (x != 0.0) | mnp.isnan(y)
        return mnp.where(use, lax.mul(x, log(y)), mnp.zeros_like(x))

    @fn.defjvp
    def _jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
        (x, y), (tx, ty) = primals, tangents
        out = fn(x, y)
        denominator = y if log_prim == "log" else 1 + y
        return out, mnp.asarray(tx * log(mnp.asarray(y, out.dtype)) + ty * x / denominator, out.dtype)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``x * {log_prim}(y)``, defined as 0 where ``x == 0`` (unless y is NaN)."
    return fn


xlogy = _x_log("xlogy", "log")
xlog1py = _x_log("xlog1py", "log1p")


@custom_jvp
def _xlogx(x: Any) -> Any:
    return xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _xlogx(x), t * (lax.log(x) + 1)


def entr(x: Any) -> Any:
    """The elementwise entropy ``-x log x`` (0 at 0, -inf below)."""
    (x,) = promote_args_inexact("entr", x)
    return mnp.where(x < 0, np.array(-np.inf, x.dtype), lax.neg(_xlogx(x)))


def rel_entr(p: Any, q: Any) -> Any:
    """``p log(p / q)`` for p, q > 0; 0 at p = 0 <= q; inf otherwise."""
    p, q = promote_args_inexact("rel_entr", p, q)
    both_positive = (p > 0) & (q > 0)
    safe_p, safe_q = mnp.where(both_positive, p, 1), mnp.where(both_positive, q, 1)
    value = _xlogx(safe_p) - xlogy(safe_p, safe_q)
    zero = np.array(0, p.dtype)
    return mnp.where(both_positive, value, mnp.where((p == 0) & (q >= 0), zero, np.array(np.inf, p.dtype)))


def kl_div(p: Any, q: Any) -> Any:
    """``rel_entr(p, q) - p + q``."""
    p, q = promote_args_inexact("kl_div", p, q)
    return rel_entr(p, q) - p + q


def _box_cox(name: str, log_prim: str) -> Any:
    def fn(x: Any, lmbda: Any) -> Any:
        x, lmbda = promote_args_inexact(name, x, lmbda)
        zero = lmbda == 0
        safe = mnp.where(zero, mnp.ones_like(lmbda), lmbda)
        log_x = getattr(lax, log_prim)(x)
        return mnp.where(zero, log_x, lax.expm1(safe * log_x) / safe)

    fn.__name__ = fn.__qualname__ = name
    arg = "x" if log_prim == "log" else "1 + x"
    fn.__doc__ = f"The Box-Cox transform of {arg}: ``(({arg})**lmbda - 1) / lmbda``, its log at lmbda = 0."
    return fn


boxcox = _box_cox("boxcox", "log")
boxcox1p = _box_cox("boxcox1p", "log1p")


def softmax(x: Any, /, *, axis: Any = None) -> Any:
    """``exp(x) / sum(exp(x))`` over ``axis`` (all axes by default)."""
    from mlax import nn  # mlax.nn imports this package (logsumexp)

    return nn.softmax(x, axis=axis)


def log_softmax(x: Any, /, *, axis: Any = None) -> Any:
    """``x - logsumexp(x)`` over ``axis`` (all axes by default)."""
    from mlax import nn  # mlax.nn imports this package (logsumexp)

    return nn.log_softmax(x, axis=axis)
