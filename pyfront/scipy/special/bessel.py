"""The modified Bessel functions of the first kind of orders 0 and 1 of mlax.scipy.special
(as jax.scipy.special): i0e and i1e are mlax.lax's Cephes expansions, i0 and i1 those times
``exp(|x|)``."""

from __future__ import annotations

from typing import Any

from mlax import lax
from mlax.numpy.util import promote_args_inexact

__all__ = ["i0", "i0e", "i1", "i1e"]


def _bessel(name: str, prim: str, scaled: bool) -> Any:
    def fn(x: Any) -> Any:
        (x,) = promote_args_inexact(name, x)
        value = getattr(lax, prim)(x)
        return value if scaled else lax.mul(lax.exp(lax.abs(x)), value)

    order = name[1]
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The exponentially scaled modified Bessel function of order {order}, "
                  f"exp(-|x|) I{order}(x)." if scaled else f"The modified Bessel function of order {order}.")
    return fn


i0e = _bessel("i0e", "bessel_i0e", True)
i0 = _bessel("i0", "bessel_i0e", False)
i1e = _bessel("i1e", "bessel_i1e", True)
i1 = _bessel("i1", "bessel_i1e", False)
