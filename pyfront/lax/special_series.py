"""The kernels behind mlax.lax.betainc, bessel_i0e, bessel_i1e, zeta and polygamma, composed
from mlax.lax primitives as XLA expands jax's:

- betainc: jax's lowering, the continued fraction of DLMF 8.17.22 by the modified Lentz
  method (every element iterates until all have converged: 200 terms at most in float32,
  600 in float64), on the side of x where it converges fast (DLMF 8.17.4 otherwise);
- bessel_i0e / bessel_i1e: Cephes' Chebyshev expansions on [0, 8] and in 32 / |x| beyond;
- zeta: the CHLO decomposition, ten terms of the Hurwitz series then the Euler-Maclaurin
  tail with twelve Bernoulli terms (Johansson 2015, formula 5);
- polygamma: ``(-1)^(n+1) n! zeta(n + 1, x)``, digamma at n = 0.

Operands are float32 or float64 of one shape (mlax.lax.special_functions checks, broadcasts
and widens half floats).
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from mlax import lax
from mlax.lax.special_gamma import any_of, digamma, full, isnan, k, lgamma

__all__ = ["bessel_i0e", "bessel_i1e", "betainc", "polygamma", "zeta"]


def _numerator(n: Any, a: Any, b: Any, x: Any) -> Any:
    """The n-th partial numerator of the continued fraction (1 at n = 1)."""
    m_int = lax.div(lax.sub(n, np.int32(1)), np.int32(2))
    m = lax.broadcast_in_dim(lax.convert_element_type(m_int, x.dtype), x.shape, ())
    two_m = lax.mul(k(x, 2), m)
    first = lax.div(lax.mul(lax.neg(lax.add(a, b)), x), lax.add(a, k(a, 1)))
    even = lax.div(lax.mul(lax.mul(lax.neg(lax.add(a, m)), lax.add(lax.add(a, b), m)), x),
                   lax.mul(lax.add(a, two_m), lax.add(lax.add(a, two_m), k(a, 1))))
    even = lax.select(lax.eq(m_int, np.int32(0)), first, even)
    odd = lax.div(lax.mul(lax.mul(m, lax.sub(b, m)), x),
                  lax.mul(lax.sub(lax.add(a, two_m), k(a, 1)), lax.add(a, two_m)))
    value = lax.select(lax.eq(lax.rem(n, np.int32(2)), np.int32(0)), even, odd)
    return lax.select(lax.eq(n, np.int32(1)), full(x, 1), value)


def _lentz(a: Any, b: Any, x: Any) -> Any:
    """The continued fraction b0 + a1 / (b1 + a2 / (b2 + ...)) with b0 = 0, bn = 1."""
    small = k(x, ml_dtypes.finfo(x.dtype).eps / 2)
    limit = np.int32(200 if x.dtype == np.float32 else 600)

    def clamp_small(v: Any) -> Any:
        return lax.select(lax.lt(lax.abs(v), small), full(v, small), v)

    def body(vals: tuple[Any, ...]) -> tuple[Any, ...]:
        n, _, c, d, h = vals
        numerator = _numerator(n, a, b, x)
        c = clamp_small(lax.add(k(x, 1), lax.div(numerator, c)))
        d = lax.div(k(x, 1), clamp_small(lax.add(k(x, 1), lax.mul(numerator, d))))
        delta = lax.mul(c, d)
        unconverged = lax.ge(lax.abs(lax.sub(delta, k(x, 1))), small)
        return (lax.add(n, np.int32(1)), lax.reduce_or(unconverged, tuple(range(x.ndim))), c, d,
                lax.mul(h, delta))

    def cond(vals: tuple[Any, ...]) -> Any:
        return lax.bitwise_and(lax.lt(vals[0], limit), vals[1])

    h = full(x, small)
    return lax.while_loop(cond, body, (np.int32(1), np.bool_(True), h, full(x, 0), h))[4]


def betainc(a: Any, b: Any, x: Any) -> Any:
    """I_x(a, b); NaN for a, b or x out of range (or NaN), 0/1 at the degenerate edges."""
    a_is_zero = lax.bitwise_or(lax.eq(a, k(a, 0)), lax.eq(b, k(b, np.inf)))
    b_is_zero = lax.bitwise_or(lax.eq(b, k(b, 0)), lax.eq(a, k(a, np.inf)))
    x_is_zero, x_is_one = lax.eq(x, k(x, 0)), lax.eq(x, k(x, 1))
    result_is_zero = lax.bitwise_or(lax.bitwise_and(b_is_zero, lax.bitwise_not(x_is_one)),
                                    lax.bitwise_and(a_is_zero, x_is_zero))
    result_is_one = lax.bitwise_or(lax.bitwise_and(a_is_zero, lax.bitwise_not(x_is_zero)),
                                   lax.bitwise_and(b_is_zero, x_is_one))
    result_is_nan = any_of(lax.lt(a, k(a, 0)), lax.lt(b, k(b, 0)), lax.lt(x, k(x, 0)), lax.gt(x, k(x, 1)),
                           lax.bitwise_and(a_is_zero, b_is_zero), isnan(a), isnan(b), isnan(x))
    fast = lax.lt(x, lax.div(lax.add(a, k(a, 1)), lax.add(lax.add(a, b), k(b, 2))))
    a, b = lax.select(fast, a, b), lax.select(fast, b, a)
    x = lax.select(fast, x, lax.sub(k(x, 1), x))
    fraction = _lentz(a, b, x)
    # a -> 0: a Gamma(a) = Gamma(a + 1) -> 1 keeps the prefactor finite
    lbeta_small_a = lax.sub(lgamma(b), lgamma(lax.add(a, b)))
    lbeta = lax.add(lgamma(a), lbeta_small_a)
    b_log1m_x = lax.mul(lax.log1p(lax.neg(x)), b)
    factor = lax.select(lax.lt(a, k(a, ml_dtypes.finfo(a.dtype).tiny * 2)),
                        lax.exp(lax.sub(b_log1m_x, lbeta_small_a)),
                        lax.div(lax.exp(lax.sub(lax.add(lax.mul(lax.log(x), a), b_log1m_x), lbeta)), a))
    result = lax.mul(fraction, factor)
    result = lax.select(fast, result, lax.sub(k(result, 1), result))
    result = lax.select(result_is_zero, full(a, 0), result)
    result = lax.select(result_is_one, full(a, 1), result)
    return lax.select(result_is_nan, full(a, np.nan), result)


def _chebyshev(x: Any, coefficients: tuple[float, ...]) -> Any:
    """Clenshaw's recurrence for the Chebyshev series (Cephes' chbevl)."""
    b0, b1, b2 = full(x, 0), full(x, 0), full(x, 0)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = lax.add(lax.sub(lax.mul(x, b1), b2), k(x, c))
    return lax.mul(lax.sub(b0, b2), k(x, 0.5))


# Cephes' i0e and i1e coefficients: (A on [0, 8], B beyond) by dtype; float32 uses the tails.
_I0E_A = (-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
          1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
          -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
          9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
          -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
          1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
          -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
          1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
          -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
          1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0E_B = (-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
          3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
          1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
          -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
          7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
          -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
          3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
          2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
          8.04490411014108831608E-1)
_I1E_A = (2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
          -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
          3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
          -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
          9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
          -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
          4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
          -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
          2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
          -1.76416518357834055153E-1, 2.52587186443633654823E-1)
_I1E_B = (7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
          -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
          -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
          4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
          -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
          3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
          -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
          -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
          7.78576235018280120474E-1)
# (float32 terms of A, of B): the float64 series' tails
_F32_TERMS = {"i0e": (18, 7), "i1e": (17, 7)}


def _bessel(name: str, x: Any, a: tuple[float, ...], b: tuple[float, ...]) -> tuple[Any, Any]:
    """|x| and the Cephes expansion of i0e / i1e (without i1e's factor |x|) at |x|."""
    if x.dtype == np.float32:
        a, b = a[-_F32_TERMS[name][0]:], b[-_F32_TERMS[name][1]:]
    z = lax.abs(x)
    near = _chebyshev(lax.sub(lax.mul(k(z, 0.5), z), k(z, 2)), a)
    far = lax.div(_chebyshev(lax.sub(lax.div(k(z, 32), z), k(z, 2)), b), lax.sqrt(z))
    return z, near, far


def bessel_i0e(x: Any) -> Any:
    """exp(-|x|) I0(x)."""
    z, near, far = _bessel("i0e", x, _I0E_A, _I0E_B)
    return lax.select(lax.le(z, k(z, 8)), near, far)


def bessel_i1e(x: Any) -> Any:
    """exp(-|x|) I1(x)."""
    z, near, far = _bessel("i1e", x, _I1E_A, _I1E_B)
    return lax.mul(lax.sign(x), lax.select(lax.le(z, k(z, 8)), lax.mul(z, near), far))


# Euler-Maclaurin: (2j)! / B_2j for j = 12 .. 1
_ZETA_COEFFICIENTS = (-7.1661652561756670113e18, 1.8152105401943546773e17, -4.5979787224074726105e15,
                      1.1646782814350067249e14, -2.950130727918164224e12, 7.47242496e10,
                      -1.8924375803183791606e9, 47900160.0, -1209600.0, 30240.0, -720.0, 12.0)


def zeta(x: Any, q: Any) -> Any:
    """The Hurwitz zeta function sum_n (q + n)^-x; NaN for x < 1 (and non-integer x at q <= 0),
    inf at x = 1 and at the poles q = 0, -1, ... for even integer x."""
    neg_x = lax.neg(x)
    acc = q
    power_sum = lax.pow(q, neg_x)
    for _ in range(9):
        acc = lax.add(acc, k(q, 1))
        power_sum = lax.add(power_sum, lax.pow(acc, neg_x))
    acc = lax.add(acc, k(q, 1))
    q_neg_power = lax.pow(acc, neg_x)
    correction = lax.div(lax.mul(q_neg_power, acc), lax.sub(x, k(x, 1)))
    inv_acc_sq = lax.div(k(q, 1), lax.mul(acc, acc))
    horner = full(q, 0)
    for i, coefficient in enumerate(_ZETA_COEFFICIENTS[:-1]):
        factor = lax.mul(lax.add(x, k(x, 22 - 2 * i)), lax.add(x, k(x, 21 - 2 * i)))
        horner = lax.mul(factor, lax.mul(inv_acc_sq, lax.add(horner, k(q, 1 / coefficient))))
    horner = lax.add(k(q, 1 / _ZETA_COEFFICIENTS[-1]), horner)
    tail = lax.mul(q_neg_power, lax.add(k(q, 0.5), lax.mul(lax.div(x, acc), horner)))
    accurate = lax.add(lax.add(power_sum, correction), tail)
    tiny = k(q, ml_dtypes.finfo(q.dtype).smallest_subnormal)
    out = lax.select(lax.lt(lax.abs(q_neg_power), lax.mul(lax.abs(power_sum), tiny)), power_sum, accurate)
    out = lax.select(lax.lt(x, k(x, 1)), full(x, np.nan), out)
    q_le_zero = lax.le(q, k(q, 0))
    x_is_int = lax.eq(x, lax.floor(x))
    out = lax.select(lax.bitwise_and(q_le_zero, lax.bitwise_not(x_is_int)), full(x, np.nan), out)
    at_pole = lax.bitwise_and(q_le_zero, lax.eq(q, lax.floor(q)))
    even_int = lax.bitwise_and(x_is_int, lax.eq(lax.rem(x, k(x, 2)), k(x, 0)))
    out = lax.select(at_pole, lax.select(even_int, full(x, np.inf), full(x, np.nan)), out)
    return lax.select(lax.eq(x, k(x, 1)), full(x, np.inf), out)


def polygamma(n: Any, x: Any) -> Any:
    """The n-th derivative of digamma; NaN unless n is a natural number."""
    sign = lax.sub(lax.mul(k(x, 2), lax.rem(n, k(n, 2))), k(x, 1))
    n_plus_one = lax.add(n, k(n, 1))
    result = lax.mul(lax.mul(sign, lax.exp(lgamma(n_plus_one))), zeta(n_plus_one, x))
    result = lax.select(lax.eq(n, k(n, 0)), digamma(x), result)
    not_natural = lax.bitwise_or(lax.ne(n, lax.floor(n)), lax.lt(n, k(n, 0)))
    return lax.select(not_natural, full(x, np.nan), result)
