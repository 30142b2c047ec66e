"""`mlax.numpy.i0`: the modified Bessel function of the first kind, order zero, as jnp.i0:
``exp(|x|) * bessel_i0e(|x|)`` on mlax.lax's scaled Bessel function (Cephes' series, as XLA's),
with jax's custom_jvp: the derivative of that product, 0 at x = 0."""

from __future__ import annotations

from typing import Any

from mlax import lax
from mlax.autodiff import jvp
from mlax.custom_derivatives import custom_jvp
from mlax.numpy.util import const_like, promote_args_inexact

__all__ = ["i0"]


def _i0_primal(x: Any) -> Any:
    a = lax.abs(x)
    return lax.mul(lax.exp(a), lax.bessel_i0e(a))


def _i0_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    out, out_dot = jvp(_i0_primal, primals, tangents)
    (x,) = primals
    return out, lax.select(lax.eq(x, const_like(x, 0)), const_like(out_dot, 0), out_dot)


_i0 = custom_jvp(_i0_primal)
_i0.defjvp(_i0_jvp)


def i0(x: Any) -> Any:
    """``jnp.i0``: the modified Bessel function of the first kind of order zero, in the inexact
    type of ``x``."""
    (x,) = promote_args_inexact("i0", x)
    return _i0(x)
