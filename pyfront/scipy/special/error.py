"""The scaled complementary error function and Dawson's integral of mlax.scipy.special (as
jax.scipy.special): erfcx = exp(x^2) erfc(x), asymptotic beyond sqrt(log(max float)) (complex
arguments: the Faddeeva function w(ix), faddeeva.py); dawsn by Cephes' three rational
approximations. Both carry jax's derivatives (erfcx' = 2 x erfcx - 2 / sqrt(pi), dawsn' =
1 - 2 x dawsn). Half floats compute in float32.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.custom_derivatives import custom_jvp
from mlax.numpy.util import promote_args_inexact
from mlax.scipy.special.faddeeva import wofz

__all__ = ["dawsn", "erfcx"]

# erfcx's asymptotic series in 1 / x^2, highest power first; float32 uses the last five
_ERFCX_ASYMPTOTIC = (7918.06640625, -1055.7421875, 162.421875, -29.53125, 6.5625, -1.875, 0.75, -0.5, 1.0)

# Cephes' dawsn: numerator and denominator on [0, 3.25) (in x^2), [3.25, 6.25) and beyond (in 1/x^2)
_DAWSN = (
    ((1.13681498971755972054E-11, 8.49262267667473811108E-10, 1.94434204175553054283E-8,
      9.53151741254484363489E-7, 3.07828309874913200438E-6, 3.52513368520288738649E-4,
      -8.50149846724410912031E-4, 4.22618223005546594270E-2, -9.17480371773452345351E-2,
      9.99999999999999994612E-1),
     (2.40372073066762605484E-11, 1.48864681368493396752E-9, 5.21265281010541664570E-8,
      1.27258478273186970203E-6, 2.32490249820789513991E-5, 3.25524741826057911661E-4,
      3.48805814657162590916E-3, 2.79448531198828973716E-2, 1.58874241960120565368E-1,
      5.74918629489320327824E-1, 1.00000000000000000539E0)),
    ((5.08955156417900903354E-1, -2.44754418142697847934E-1, 9.41512335303534411857E-2,
      -2.18711255142039025206E-2, 3.66207612329569181322E-3, -4.23209114460388756528E-4,
      3.59641304793896631888E-5, -2.14640351719968974225E-6, 9.10010780076391431042E-8,
      -2.40274520828250956942E-9, 3.59233385440928410398E-11),
     (1.00000000000000000000E0, -6.31839869873368190192E-1, 2.36706788228248691528E-1,
      -5.31806367003223277662E-2, 8.48041718586295374409E-3, -9.47996768486665330168E-4,
      7.81025592944552338085E-5, -4.55875153252442634831E-6, 1.89100358111421846170E-7,
      -4.91324691331920606875E-9, 7.18466403235734541950E-11)),
    ((-5.90592860534773254987E-1, 6.29235242724368800674E-1, -1.72858975380388136411E-1,
      1.64837047825189632310E-2, -4.86827613020462700845E-4),
     (1.00000000000000000000E0, -2.69820057197544900361E0, 1.73270799045947845857E0,
      -3.93708582281939493482E-1, 3.44278924041233391079E-2, -9.73655226040941223894E-4)),
)


def _polyval(coefficients: tuple[float, ...], x: Any) -> Any:
    y = mnp.zeros_like(x)
    for c in coefficients:
        y = y * x + np.array(c, x.dtype)
    return y


def _in_float32(kernel: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``kernel`` on float32 for half floats, rounded back."""

    def fn(x: Any) -> Any:
        if x.dtype.itemsize == 2:
            return kernel(x.astype(np.float32)).astype(x.dtype)
        return kernel(x)

    return fn


@_in_float32
def _erfcx_kernel(x: Any) -> Any:
    large = x > np.array(math.sqrt(math.log(float(ml_dtypes.finfo(x.dtype).max))), x.dtype)
    safe_x = mnp.where(large, mnp.ones_like(x), x)
    direct = lax.exp(lax.square(safe_x)) * lax.erfc(safe_x)
    terms = _ERFCX_ASYMPTOTIC[-(9 if x.dtype == np.float64 else 5):]
    asymptotic = _polyval(terms, np.array(1, x.dtype) / lax.square(x)) / (x * np.array(math.sqrt(math.pi),
                                                                                        x.dtype))
    return mnp.where(large, asymptotic, direct)


@_in_float32
def _dawsn_kernel(x: Any) -> Any:
    ax = lax.abs(x)
    one = np.array(1, x.dtype)
    inv_sq = one / lax.square(ax)
    near, middle = ax < np.array(3.25, x.dtype), ax < np.array(6.25, x.dtype)

    def safe(mask: Any, v: Any) -> Any:
        return mnp.where(mask, v, mnp.ones_like(v))

    def tail(mask: Any, coefficients: tuple[tuple[float, ...], tuple[float, ...]]) -> Any:
        t, a = safe(mask, inv_sq), safe(mask, ax)
        ratio = _polyval(coefficients[0], t) / _polyval(coefficients[1], t)
        return np.array(0.5, x.dtype) / a * (one + t * ratio)

    a = safe(near, ax)
    a2 = lax.square(a)
    value_near = a * _polyval(_DAWSN[0][0], a2) / _polyval(_DAWSN[0][1], a2)
    value = mnp.where(near, value_near, mnp.where(middle, tail(~near & middle, _DAWSN[1]),
                                                  tail(~middle, _DAWSN[2])))
    return mnp.sign(x) * value


def _with_derivative(name: str, kernel: Callable[[Any], Any], derivative: Callable[[Any, Any], Any],
                     doc: str) -> Any:
    fn = custom_jvp(kernel)

    @fn.defjvp
    def _jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        out = fn(x)
        return out, t * derivative(x, out)

    def public(x: Any) -> Any:
        (x,) = promote_args_inexact(name, x)
        return fn(x)

    public.__name__ = public.__qualname__ = name
    public.__doc__ = doc
    return public


_real_erfcx = _with_derivative("erfcx", _erfcx_kernel,
                               lambda x, y: 2 * x * y - np.array(2 / math.sqrt(math.pi), x.dtype),
                               "The scaled complementary error function ``exp(x^2) erfc(x)``.")


def erfcx(x: Any) -> Any:
    """The scaled complementary error function ``exp(x^2) erfc(x)``; complex ``x`` is the
    Faddeeva function at ``ix`` (as jax)."""
    (x,) = promote_args_inexact("erfcx", x)
    if not mnp.iscomplexobj(x):
        return _real_erfcx(x)
    return wofz(lax.complex(lax.neg(lax.imag(x)), lax.real(x)))
dawsn = _with_derivative("dawsn", _dawsn_kernel, lambda x, y: np.array(1, x.dtype) - 2 * x * y,
                         "Dawson's integral ``exp(-x^2) int_0^x exp(t^2) dt``.")
