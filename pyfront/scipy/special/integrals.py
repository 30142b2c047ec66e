"""The exponential, sine/cosine and Fresnel integrals and Spence's function of
mlax.scipy.special (as jax.scipy.special, real arguments), by Cephes' algorithms as jax ports
them: expn by its power series (x <= 1), continued fraction (x > 1) or asymptotic expansion
(n >= 5000); expi by rational approximations on (0, 2], (2, 4], ..., (32, 64] and beyond;
sici by a rational series up to 4 and the auxiliary functions f, g beyond; fresnel by
Cephes' fresnl (fresnlf in float32, whose half floats compute in float32); spence by its
rational approximation after the reflections to [0.5, 1.5].

jax evaluates the branches of expn per element (jnp.vectorize over jnp.piecewise); here each
branch runs on the whole array with the other elements replaced by a harmless value, and its
loops stop per element as a batched lax.while_loop does (``while_each``), so every element
takes the same steps as in jax. The derivatives are jax's: d expn / dx = -expn(n - 1, x),
expi' = exp(x) / x, sici' = (sinc(x / pi), cos(x) / x), fresnel' = (sin, cos)(pi x^2 / 2).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.custom_derivatives import custom_jvp
from mlax.numpy.util import promote_args_inexact
from mlax.scipy.special.error import _polyval
from mlax.scipy.special.gamma_family import gammaln

__all__ = ["exp1", "expi", "expn", "fresnel", "sici", "spence"]


def while_each(cond: Callable[[tuple[Any, ...]], Any], body: Callable[[tuple[Any, ...]], tuple[Any, ...]],
               state: tuple[Any, ...]) -> tuple[Any, ...]:
    """A loop over arrays of one shape whose elements stop one by one: ``body`` applies where
    ``cond`` (elementwise) still holds, as jax's while_loop does under vmap."""

    def step(s: tuple[Any, ...]) -> tuple[Any, ...]:
        active = cond(s)
        return tuple(mnp.where(active, new, old) for new, old in zip(body(s), s, strict=True))

    return lax.while_loop(lambda s: mnp.any(cond(s)), step, state)


def _c(x: Any, value: float) -> Any:
    return np.array(value, x.dtype)


def _eps(x: Any) -> Any:
    return _c(x, float(ml_dtypes.finfo(x.dtype).eps))


# ---- expn (Cephes expn.c) --------------------------------------------------------------------

def _expn_series(x: Any, n: Any) -> Any:
    """The power series about 0 (0 < x <= 1)."""
    one, zero = _c(x, 1), _c(x, 0)
    psi = -np.euler_gamma - lax.log(x)
    _, psi = while_each(lambda s: s[0] < n, lambda s: (s[0] + one, s[1] + one / s[0]),
                        (mnp.ones_like(n), psi))
    n1 = mnp.where(n == 1, one + one, n)

    def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
        xk, yk, pk, ans, _ = s
        xk = xk + one
        yk = yk * -x / xk
        pk = pk + one
        ans = ans + mnp.where(pk != zero, yk / pk, zero)
        return xk, yk, pk, ans, mnp.where(ans != zero, lax.abs(yk / ans), one)

    init = (mnp.zeros_like(x), mnp.ones_like(x), one - n, mnp.where(n == 1, zero, one / (one - n1)),
            mnp.full_like(x, np.inf))
    ans = while_each(lambda s: (x > zero) & (s[4] > _eps(x)), body, init)[3]
    return lax.pow(-x, n - one) * psi / lax.exp(gammaln(n)) - ans


def _expn_fraction(x: Any, n: Any) -> Any:
    """The continued fraction (x > 1), rescaled when its terms grow past 2^57."""
    one, zero, big = _c(x, 1), _c(x, 0), _c(x, 1.44115188075855872e17)

    def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
        kk, pkm2, qkm2, pkm1, qkm1, ans, _, r = s
        kk = kk + one
        odd = lax.rem(kk, _c(x, 2)) == one
        yk = mnp.where(odd, one, x)
        xk = mnp.where(odd, n + (kk - one) / _c(x, 2), kk / _c(x, 2))
        pk, qk = pkm1 * yk + pkm2 * xk, qkm1 * yk + qkm2 * xk
        nonzero = qk != zero
        r = mnp.where(nonzero, pk / qk, r)
        t = mnp.where(nonzero, lax.abs((ans - r) / r), one)
        ans = mnp.where(nonzero, r, ans)
        scaled = [mnp.where(lax.abs(pk) > big, v / big, v) for v in (pkm1, qkm1, pk, qk)]
        return kk, scaled[0], scaled[1], scaled[2], scaled[3], ans, t, r

    init = (mnp.ones_like(x), mnp.ones_like(x), x, mnp.ones_like(x), x + n, one / (x + n),
            mnp.full_like(x, np.inf), mnp.zeros_like(x))
    ans = while_each(lambda s: (x > zero) & (s[6] > _eps(x)), body, init)[5]
    return ans * lax.exp(-x)


def _expn_asymptotic(x: Any, n: Any) -> Any:
    """The expansion for large n (n >= 5000)."""
    xk = x + n
    yk = _c(x, 1) / (xk * xk)
    ans = yk * n * (_c(x, 6) * x * x - _c(x, 8) * n * x + n * n)
    ans = yk * (ans + n * (n - _c(x, 2) * x))
    ans = yk * (ans + n)
    return (ans + _c(x, 1)) * lax.exp(-x) / xk


def _on(mask: Any, fn: Callable[[Any, Any], Any], x: Any, n: Any, safe: float) -> Any:
    """``fn(x, n)`` where ``mask``; elsewhere it runs on ``x = safe, n = 1`` (discarded)."""
    return fn(mnp.where(mask, x, _c(x, safe)), mnp.where(mask, n, _c(n, 1)))


def _expn_primal(n: Any, x: Any) -> Any:
    one, zero = _c(x, 1), _c(x, 0)
    at_zero = x == zero
    conds = [(n < 0) | (x < zero), at_zero & (n < 2), at_zero & (n >= 2), n == 0, n >= 5000, x > one]
    taken = [c & ~mnp.any(mnp.stack(conds[:i]), axis=0) if i else c for i, c in enumerate(conds)]
    rest = ~mnp.any(mnp.stack(conds), axis=0)
    values = [mnp.full_like(x, np.nan), mnp.full_like(x, np.inf), one / mnp.where(n == 1, n + n, n),
              lax.exp(-x) / x, _on(taken[4], _expn_asymptotic, x, n, 1.0),
              _on(taken[5], _expn_fraction, x, n, 2.0)]
    return mnp.select(conds, values, _on(rest, _expn_series, x, n, 0.5))


_expn = custom_jvp(_expn_primal, nondiff_argnums=(0,))


@_expn.defjvp
def _expn_jvp(n: Any, primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (x,), (x_dot,) = primals, tangents
    return _expn(n, x), -x_dot * _expn(n - _c(n, 1), x)


def expn(n: Any, x: Any) -> Any:
    """The generalized exponential integral ``E_n(x) = x^(n-1) int_x^inf exp(-t) / t^n dt``
    (differentiable in x only, as in jax)."""
    n, x = promote_args_inexact("expn", n, x)
    shape = np.broadcast_shapes(n.shape, x.shape)
    return _expn(mnp.broadcast_to(n, shape), mnp.broadcast_to(x, shape))


def exp1(x: Any) -> Any:
    """The exponential integral ``E_1(x) = int_x^inf exp(-t) / t dt``."""
    (x,) = promote_args_inexact("exp1", x)
    return expn(mnp.ones_like(x), x)


# ---- expi (Cephes ei.c) ----------------------------------------------------------------------

# (numerator, denominator) in 1/x on (2, 4], (4, 8], ..., (32, 64], (64, inf); (0, 2] is in x
_EI_SMALL = ((-5.350447357812542947283e0, 2.185049168816613393830e2, -4.176572384826693777058e3,
              5.541176756393557601232e4, -3.313381331178144034309e5, 1.592627163384945414220e6),
             (1.0, -5.250547959112862969197e1, 1.259616186786790571525e3, -1.756549581973534652631e4,
              1.493062117002725991967e5, -7.294949239640527645655e5, 1.592627163384945429726e6))
_EI = (
    ((1.981808503259689673238e-2, -1.271645625984917501326e0, -2.088160335681228318920e0,
      2.755544509187936721172e0, -4.409507048701600257171e-1, 4.665623805935891391017e-2,
      -1.545042679673485262580e-3, 7.059980605299617478514e-5),
     (1.0, 1.476498670914921440652e0, 5.629177174822436244827e-1, 1.699017897879307263248e-1,
      2.291647179034212017463e-2, 4.450150439728752875043e-3, 1.727439612206521482874e-4,
      3.953167195549672482304e-5)),
    ((-1.373215375871208729803e0, -7.084559133740838761406e-1, 1.580806855547941010501e0,
      -2.601500427425622944234e-1, 2.994674694113713763365e-2, -1.038086040188744005513e-3,
      4.371064420753005429514e-5, 2.141783679522602903795e-6),
     (1.0, 8.585231423622028380768e-1, 4.483285822873995129957e-1, 7.687932158124475434091e-2,
      2.449868241021887685904e-2, 8.832165941927796567926e-4, 4.590952299511353531215e-4,
      -4.729848351866523044863e-6, 2.665195537390710170105e-6)),
    ((-2.106934601691916512584e0, 1.732733869664688041885e0, -2.423619178935841904839e-1,
      2.322724180937565842585e-2, 2.372880440493179832059e-4, -8.343219561192552752335e-5,
      1.363408795605250394881e-5, -3.655412321999253963714e-7, 1.464941733975961318456e-8,
      6.176407863710360207074e-10),
     (1.0, -2.298062239901678075778e-1, 1.105077041474037862347e-1, -1.566542966630792353556e-2,
      2.761106850817352773874e-3, -2.089148012284048449115e-4, 1.708528938807675304186e-5,
      -4.459311796356686423199e-7, 1.394634930353847498145e-8, 6.150865933977338354138e-10)),
    ((-2.458119367674020323359e-1, -1.483382253322077687183e-1, 7.248291795735551591813e-2,
      -1.348315687380940523823e-2, 1.342775069788636972294e-3, -7.942465637159712264564e-5,
      2.644179518984235952241e-6, -4.239473659313765177195e-8),
     (1.0, -1.044225908443871106315e-1, -2.676453128101402655055e-1, 9.695000254621984627876e-2,
      -1.601745692712991078208e-2, 1.496414899205908021882e-3, -8.462452563778485013756e-5,
      2.728938403476726394024e-6, -4.239462431819542051337e-8)),
    ((1.212561118105456670844e-1, -5.823133179043894485122e-1, 2.348887314557016779211e-1,
      -3.040034318113248237280e-2, 1.510082146865190661777e-3, -2.523137095499571377122e-5),
     (1.0, -1.002252150365854016662e0, 2.928709694872224144953e-1, -3.337004338674007801307e-2,
      1.560544881127388842819e-3, -2.523137093603234562648e-5)),
    ((-7.657847078286127362028e-1, 6.886192415566705051750e-1, -2.132598113545206124553e-1,
      3.346107552384193813594e-2, -3.076541477344756050249e-3, 1.747119316454907477380e-4,
      -6.103711682274170530369e-6, 1.218032765428652199087e-7, -1.086076102793290233007e-9),
     (1.0, -1.888802868662308731041e0, 1.066691687211408896850e0, -2.751915982306380647738e-1,
      3.930852688233823569726e-2, -3.414684558602365085394e-3, 1.866844370703555398195e-4,
      -6.345146083130515357861e-6, 1.239754287483206878024e-7, -1.086076102793126632978e-9)),
)


def _ei_small(x: Any) -> Any:
    ratio = _polyval(_EI_SMALL[0], x) / _polyval(_EI_SMALL[1], x)
    return x * ratio + np.euler_gamma + lax.log(x)


def _ei_tail(coefficients: tuple[tuple[float, ...], tuple[float, ...]], x: Any) -> Any:
    w = _c(x, 1) / x
    ratio = _polyval(coefficients[0], w) / _polyval(coefficients[1], w)
    return lax.exp(x) * w * (w * ratio + _c(x, 1))


@custom_jvp
def _expi(x: Any) -> Any:
    # the intervals (0, 2], (2, 4], ..., (32, 64]; everything else (x = 0, x > 64, NaN) takes the last
    bounds = [(0.0, 2.0)] + [(2.0 ** i, 2.0 ** (i + 1)) for i in range(1, 6)]
    conds = [(x < 0)] + [(_c(x, lo) < x) & (x <= _c(x, hi)) for lo, hi in bounds]
    values = [-exp1(mnp.where(conds[0], -x, _c(x, 1))), _ei_small(mnp.where(conds[1], x, _c(x, 1)))]
    values += [_ei_tail(coefficients, mnp.where(cond, x, _c(x, 2.0 ** (i + 2))))
               for i, (cond, coefficients) in enumerate(zip(conds[2:], _EI[:-1], strict=True))]
    return mnp.select(conds, values, _ei_tail(_EI[-1], x))


@_expi.defjvp
def _expi_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (x,), (x_dot,) = primals, tangents
    return _expi(x), lax.exp(x) / x * x_dot


def expi(x: Any) -> Any:
    """The exponential integral ``Ei(x) = int_-inf^x exp(t) / t dt`` (``-E_1(-x)`` for x < 0)."""
    (x,) = promote_args_inexact("expi", x)
    return _expi(x)


# ---- sici (Cephes sici.c) --------------------------------------------------------------------

_SI_SERIES = ((-8.39167827910303881427E-11, 4.62591714427012837309E-8, -9.75759303843632795789E-6,
               9.76945438170435310816E-4, -4.13470316229406538752E-2, 1.00000000000000000302E0),
              (2.03269266195951942049E-12, 1.27997891179943299903E-9, 4.41827842801218905784E-7,
               9.96412122043875552487E-5, 1.42085239326149893930E-2, 9.99999999999999996984E-1))
_CI_SERIES = ((2.02524002389102268789E-11, -1.35249504915790756375E-8, 3.59325051419993077021E-6,
               -4.74007206873407909465E-4, 2.89159652607555242092E-2, -1.00000000000000000080E0),
              (4.07746040061880559506E-12, 3.06780997581887812692E-9, 1.23210355685883423679E-6,
               3.17442024775032769882E-4, 5.10028056236446052392E-2, 4.00000000000000000080E0))
# the auxiliary functions f (in 1/x^2, over x) and g (in 1/x^2, times it) on (4, 8) and [8, 1e9]
_SICI_F4 = ((4.23612862892216586994E0, 5.45937717161812843388E0, 1.62083287701538329132E0,
             1.67006611831323023771E-1, 6.81020132472518137426E-3, 1.08936580650328664411E-4,
             5.48900223421373614008E-7),
            (1, 8.16496634205391016773E0, 7.30828822505564552187E0, 1.86792257950184183883E0,
             1.78792052963149907262E-1, 7.01710668322789753610E-3, 1.10034357153915731354E-4,
             5.48900252756255700982E-7))
_SICI_G4 = ((8.71001698973114191777E-2, 6.11379109952219284151E-1, 3.97180296392337498885E-1,
             7.48527737628469092119E-2, 5.38868681462177273157E-3, 1.61999794598934024525E-4,
             1.97963874140963632189E-6, 7.82579040744090311069E-9),
            (1, 1.64402202413355338886E0, 6.66296701268987968381E-1, 9.88771761277688796203E-2,
             6.22396345441768420760E-3, 1.73221081474177119497E-4, 2.02659182086343991969E-6,
             7.82579218933534490868E-9))
_SICI_F8 = ((4.55880873470465315206E-1, 7.13715274100146711374E-1, 1.60300158222319456320E-1,
             1.16064229408124407915E-2, 3.49556442447859055605E-4, 4.86215430826454749482E-6,
             3.20092790091004902806E-8, 9.41779576128512936592E-11, 9.70507110881952024631E-14),
            (1.0, 9.17463611873684053703E-1, 1.78685545332074536321E-1, 1.22253594771971293032E-2,
             3.58696481881851580297E-4, 4.92435064317881464393E-6, 3.21956939101046018377E-8,
             9.43720590350276732376E-11, 9.70507110881952025725E-14))
_SICI_G8 = ((6.97359953443276214934E-1, 3.30410979305632063225E-1, 3.84878767649974295920E-2,
             1.71718239052347903558E-3, 3.48941165502279436777E-5, 3.47131167084116673800E-7,
             1.70404452782044526189E-9, 3.85945925430276600453E-12, 3.14040098946363334640E-15),
            (1.0, 1.68548898811011640017E0, 4.87852258695304967486E-1, 4.67913194259625806320E-2,
             1.90284426674399523638E-3, 3.68475504442561108162E-5, 3.57043223443740838771E-7,
             1.72693748966316146736E-9, 3.87830166023954706752E-12, 3.14040098946363335242E-15))


def _ratio(coefficients: tuple[tuple[float, ...], tuple[float, ...]], t: Any) -> Any:
    return _polyval(coefficients[0], t) / _polyval(coefficients[1], t)


def _sici_series(x: Any) -> tuple[Any, Any]:
    t = x * x
    si = x * _polyval(_SI_SERIES[0], t) / _polyval(_SI_SERIES[1], t)
    ci = np.euler_gamma + lax.log(x) + t * _ratio(_CI_SERIES, t)
    return mnp.where(x == 0, _c(x, 0), si), mnp.where(x == 0, _c(x, -np.inf), ci)


def _sici_asymptotic(x: Any) -> tuple[Any, Any]:
    s, c, z = lax.sin(x), lax.cos(x), _c(x, 1) / (x * x)
    near = x < 8
    f = mnp.where(near, _polyval(_SICI_F4[0], z) / (x * _polyval(_SICI_F4[1], z)),
                  _polyval(_SICI_F8[0], z) / (x * _polyval(_SICI_F8[1], z)))
    g = mnp.where(near, z * _ratio(_SICI_G4, z), z * _ratio(_SICI_G8, z))
    return np.pi / 2 - f * c - g * s, f * s - g * c


def _sici_far(x: Any) -> tuple[Any, Any]:
    inf = mnp.isposinf(x)
    return (mnp.where(inf, _c(x, np.pi / 2), np.pi / 2 - lax.cos(x) / x),
            mnp.where(inf, _c(x, 0), lax.sin(x) / x))


@custom_jvp
def _sici(x: Any) -> tuple[Any, Any]:
    ax = lax.abs(x)
    conds = [ax <= 4, (ax > 4) & (ax <= 1e9)]
    parts = [_sici_series(ax), _sici_asymptotic(ax), _sici_far(ax)]
    si = mnp.select(conds, [p[0] for p in parts[:2]], parts[2][0])
    ci = mnp.select(conds, [p[1] for p in parts[:2]], parts[2][1])
    return mnp.sign(x) * si, mnp.where(mnp.isneginf(x), _c(x, np.nan), ci)


@_sici.defjvp
def _sici_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _sici(x), (mnp.sinc(x / np.pi) * t, lax.cos(x) / x * t)


def sici(x: Any) -> tuple[Any, Any]:
    """The sine and cosine integrals ``Si(x) = int_0^x sin(t) / t dt`` and
    ``Ci(x) = gamma + log|x| + int_0^x (cos(t) - 1) / t dt``."""
    (x,) = promote_args_inexact("sici", x)
    return _sici(x)


# ---- fresnel (Cephes fresnl.c; fresnlf in float32) -------------------------------------------

# (S numerator, S denominator, C numerator, C denominator) in x^4 for x^2 < 2.5625, and the
# auxiliary f and g in 1/(pi x^2)^2 beyond; float32's series have no denominators
_FRESNEL_SMALL = {
    np.dtype(np.float32): ((1.647629463788700e-9, -1.522754752581096e-7, 8.424748808502400e-6,
                            -3.120693124703272e-4, 7.244727626597022e-3, -9.228055941124598e-2,
                            5.235987735681432e-1), (1.0,),
                           (1.416802502367354e-8, -1.157231412229871e-6, 5.387223446683264e-5,
                            -1.604381798862293e-3, 2.818489036795073e-2, -2.467398198317899e-1,
                            9.999999760004487e-1), (1.0,)),
    np.dtype(np.float64): ((-2.99181919401019853726e3, 7.08840045257738576863e5, -6.29741486205862506537e7,
                            2.54890880573376359104e9, -4.42979518059697779103e10, 3.18016297876567817986e11),
                           (1.00000000000000000000e0, 2.81376268889994315696e2, 4.55847810806532581675e4,
                            5.17343888770096400730e6, 4.19320245898111231129e8, 2.24411795645340920940e10,
                            6.07366389490084639049e11),
                           (-4.98843114573573548651e-8, 9.50428062829859605134e-6, -6.45191435683965050962e-4,
                            1.88843319396703850064e-2, -2.05525900955013891793e-1, 9.99999999999999998822e-1),
                           (3.99982968972495980367e-12, 9.15439215774657478799e-10, 1.25001862479598821474e-7,
                            1.22262789024179030997e-5, 8.68029542941784300606e-4, 4.12142090722199792936e-2,
                            1.00000000000000000118e0)),
}
_FRESNEL_AUX = {
    np.dtype(np.float32): ((-1.903009855649792e12, 1.355942388050252e11, -4.158143148511033e9,
                            7.343848463587323e7, -8.732356681548485e5, 8.560515466275470e3,
                            -1.032877601091159e2, 2.999401847870011e0), (1.0,),
                           (-1.860843997624650e11, 1.278350673393208e10, -3.779387713202229e8,
                            6.492611570598858e6, -7.787789623358162e4, 8.602931494734327e2,
                            -1.493439396592284e1, 9.999841934744914e-1), (1.0,)),
    np.dtype(np.float64): ((4.21543555043677546506e-1, 1.43407919780758885261e-1, 1.15220955073585758835e-2,
                            3.45017939782574027900e-4, 4.63613749287867322088e-6, 3.05568983790257605827e-8,
                            1.02304514164907233465e-10, 1.72010743268161828879e-13,
                            1.34283276233062758925e-16, 3.76329711269987889006e-20),
                           (1.00000000000000000000e0, 7.51586398353378947175e-1, 1.16888925859191382142e-1,
                            6.44051526508858611005e-3, 1.55934409164153020873e-4, 1.84627567348930545870e-6,
                            1.12699224763999035261e-8, 3.60140029589371370404e-11,
                            5.88754533621578410010e-14, 4.52001434074129701496e-17,
                            1.25443237090011264384e-20),
                           (5.04442073643383265887e-1, 1.97102833525523411709e-1, 1.87648584092575249293e-2,
                            6.84079380915393090172e-4, 1.15138826111884280931e-5, 9.82852443688422223854e-8,
                            4.45344415861750144738e-10, 1.08268041139020870318e-12,
                            1.37555460633261799868e-15, 8.36354435630677421531e-19,
                            1.86958710162783235106e-22),
                           (1.00000000000000000000e0, 1.47495759925128324529e0, 3.37748989120019970451e-1,
                            2.53603741420338795122e-2, 8.14679107184306179049e-4, 1.27545075667729118702e-5,
                            1.04314589657571990585e-7, 4.60680728146520428211e-10,
                            1.10273215066240270757e-12, 1.38796531259578871258e-15,
                            8.39158816283118707363e-19, 1.86958710162783236342e-22)),
}


def _sincos_pi_half_square(x: Any) -> tuple[Any, Any]:
    """sin and cos of ``pi x^2 / 2``, reduced exactly modulo 2 first (SciPy's sinpi / cospi)."""
    x = lax.abs(x)
    s = mnp.fmod(x, 2.0)
    r = mnp.fmod(s * (x - s / 2), 2.0)
    sin = mnp.where(r < 0.5, lax.sin(np.pi * r),
                    mnp.where(r > 1.5, lax.sin(np.pi * (r - 2.0)), -lax.sin(np.pi * (r - 1.0))))
    cos = mnp.where(r == 0.5, _c(x, 0),
                    mnp.where(r < 1.0, -lax.sin(np.pi * (r - 0.5)), lax.sin(np.pi * (r - 1.5))))
    return sin, cos


@custom_jvp
def _fresnel(x: Any) -> tuple[Any, Any]:
    single = x.dtype == np.float32
    sn, sd, cn, cd = _FRESNEL_SMALL[x.dtype]
    fn, fd, gn, gd = _FRESNEL_AUX[x.dtype]
    ax = lax.abs(x)
    x2 = ax * ax
    t = x2 * x2
    s_small = ax * x2 * _polyval(sn, t) / _polyval(sd, t)
    c_small = ax * _polyval(cn, t) / _polyval(cd, t)
    sin, cos = _sincos_pi_half_square(ax)
    s_large = _c(x, 0.5) if single else 0.5 - 1 / (np.pi * ax) * cos
    c_large = _c(x, 0.5) if single else 0.5 + 1 / (np.pi * ax) * sin
    t = np.pi * x2
    u = 1.0 / (t * t)
    f = 1.0 - u * _polyval(fn, u) / _polyval(fd, u)
    g = (1.0 / t) * _polyval(gn, u) / _polyval(gd, u)
    s_mid = 0.5 - (f * cos + g * sin) / (np.pi * ax)
    c_mid = 0.5 + (f * sin - g * cos) / (np.pi * ax)
    infinite, small, large = mnp.isinf(x), x2 < 2.5625, ax > 36974.0

    def pick(small_v: Any, large_v: Any, mid_v: Any) -> Any:
        v = mnp.where(infinite, _c(x, 0.5), mnp.where(small, small_v, mnp.where(large, large_v, mid_v)))
        return mnp.where(x < 0, -v, v)

    return pick(s_small, s_large, s_mid), pick(c_small, c_large, c_mid)


@_fresnel.defjvp
def _fresnel_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (x,), (x_dot,) = primals, tangents
    sin, cos = _sincos_pi_half_square(x)
    return _fresnel(x), (sin * x_dot, cos * x_dot)


def fresnel(x: Any) -> tuple[Any, Any]:
    """The Fresnel integrals ``S(x) = int_0^x sin(pi t^2 / 2) dt`` and ``C(x)`` (with cos);
    half floats compute in float32."""
    (x,) = promote_args_inexact("fresnel", x)
    if x.dtype.itemsize == 2:
        s, c = _fresnel(x.astype(np.float32))
        return s.astype(x.dtype), c.astype(x.dtype)
    return _fresnel(x)


# ---- spence (Cephes spence.c) ----------------------------------------------------------------

_SPENCE = ((4.65128586073990045278E-5, 7.31589045238094711071E-3, 1.33847639578309018650E-1,
            8.79691311754530315341E-1, 2.71149851196553469920E0, 4.25697156008121755724E0,
            3.29771340985225106936E0, 1.00000000000000000126E0),
           (6.90990488912553276999E-4, 2.54043763932544379113E-2, 2.82974860602568089943E-1,
            1.41172597751831069617E0, 3.63800533345137075418E0, 5.03278880143316990390E0,
            3.54771340985225096217E0, 9.99999999999999998740E-1))


def _spence_positive(x: Any) -> Any:
    inverted = x > 2.0
    x = mnp.where(inverted, 1.0 / x, x)
    above, below = x > 1.5, x < 0.5
    w = mnp.where(above, 1.0 / x - 1.0, mnp.where(below, -x, x - 1.0))
    y = -w * _ratio(_SPENCE, w)
    y = mnp.where(below, np.pi ** 2 / 6.0 - lax.log(x) * lax.log(1.0 - x) - y, y)
    return mnp.where(inverted | above, -0.5 * lax.log(x) ** 2 - y, y)


def spence(x: Any) -> Any:
    """Spence's function (the dilogarithm) ``int_1^x log(t) / (1 - t) dt`` for x >= 0 (NaN
    below); float32 and float64 only, as in jax."""
    x = mnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported types.")
    safe = mnp.where(x <= 0, _c(x, 0.5), x)
    return mnp.select([x < 0.0, x == 1.0, x == 0.0],
                      [_c(x, np.nan), _c(x, 0), _c(x, np.pi ** 2 / 6)], _spence_positive(safe))
