"""`mlax.numpy.i0`: the modified Bessel function of the first kind, order zero, as jnp.i0:
``exp(|x|) * i0e(|x|)`` with Cephes' Chebyshev series for the scaled ``i0e`` (the coefficients
and evaluation of jax's ``lax.bessel_i0e``, so values agree with jax's to an ulp), and jax's custom_jvp
(the product rule with ``i0e' = i1e - i0e``, Cephes' ``i1e`` series; 0 at x = 0).

mlax has no bessel primitives: the series are composed from elementwise lax ops.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mlax import lax
from mlax.custom_derivatives import custom_jvp
from mlax.numpy.util import const_like, promote_args_inexact

__all__ = ["i0"]

# Cephes i0.c / i1.c: Chebyshev coefficients of exp(-x) I0(x) and exp(-x) I1(x) / x on [0, 8]
# (in ``x / 2 - 2``) and of sqrt(x) exp(-x) I0(x), sqrt(x) exp(-x) I1(x) on (8, inf) (in
# ``32 / x - 2``), highest order first. Single precision keeps the trailing terms only.
_I0E_SMALL = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1,
)
_I0E_LARGE = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)
_I1E_SMALL = (
    2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
    -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
    3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
    -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9,
    9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
    -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
    4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
    -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
    2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
    -1.76416518357834055153e-1, 2.52587186443633654823e-1,
)
_I1E_LARGE = (
    7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
    -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
    -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
    4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
    -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
    3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
    -3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
    -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
    7.78576235018280120474e-1,
)
# Terms single precision keeps: (small, large) for i0e, as jax's _i0e_impl32; i1e as Cephes' i1f.
_SINGLE_TERMS = {"i0e": (18, 7), "i1e": (17, 7)}


def _chebyshev(x: Any, coefficients: Sequence[float]) -> Any:
    """Clenshaw's recurrence for a Cephes series at ``x`` (``chbevl``), in jax's operation order."""
    b0 = b1 = b2 = const_like(x, 0)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = lax.add(lax.sub(lax.mul(x, b1), b2), const_like(x, c))
    return lax.mul(const_like(x, 0.5), lax.sub(b0, b2))


def _scaled_bessel(x: Any, name: str, small: Sequence[float], large: Sequence[float]) -> Any:
    """``i0e(|x|)`` or ``i1e(|x|)``: the two Cephes intervals, selected at 8; half precision in
    float32 (the coefficients need it), as jax."""
    dtype, weak = x.dtype, x.weak_type
    if dtype != np.float64:
        n_small, n_large = _SINGLE_TERMS[name]
        small, large = small[-n_small:], large[-n_large:]
        x = lax.convert_element_type(x, np.float32, weak)
    a = lax.abs(x)
    below = _chebyshev(lax.sub(lax.mul(const_like(a, 0.5), a), const_like(a, 2.0)), small)
    if name == "i1e":
        below = lax.mul(below, a)
    above = lax.div(_chebyshev(lax.sub(lax.div(const_like(a, 32.0), a), const_like(a, 2.0)), large),
                    lax.sqrt(a))
    out = lax.select(lax.le(a, const_like(a, 8.0)), below, above)
    return lax.convert_element_type(out, dtype, weak)


def _i0_primal(x: Any) -> Any:
    a = lax.abs(x)
    return lax.mul(lax.exp(a), _scaled_bessel(a, "i0e", _I0E_SMALL, _I0E_LARGE))


def _i0_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    """jax's rule: the derivative of ``exp(|x|) * i0e(|x|)`` by the product rule, with
    ``i0e' = i1e - sign * i0e`` (so in half precision it rounds as jax's does), 0 at x = 0."""
    (x,), (t,) = primals, tangents
    a = lax.abs(x)
    a_dot = lax.mul(lax.sign(x), t)
    scale, y = lax.exp(a), _scaled_bessel(a, "i0e", _I0E_SMALL, _I0E_LARGE)
    i1e = _scaled_bessel(a, "i1e", _I1E_SMALL, _I1E_LARGE)
    y_dot = lax.mul(a_dot, lax.sub(i1e, lax.mul(lax.sign(a), y)))
    out_dot = lax.add(lax.mul(lax.mul(a_dot, scale), y), lax.mul(scale, y_dot))
    return _i0(x), lax.select(lax.eq(x, const_like(x, 0)), const_like(out_dot, 0), out_dot)


_i0 = custom_jvp(_i0_primal)
_i0.defjvp(_i0_jvp)


def i0(x: Any) -> Any:
    """``jnp.i0``: the modified Bessel function of the first kind of order zero, in the inexact
    type of ``x``."""
    (x,) = promote_args_inexact("i0", x)
    return _i0(x)
