"""mlax.lax special functions (jax.lax's lgamma, digamma, polygamma, zeta, igamma, igammac,
igamma_grad_a, random_gamma_grad, betainc, bessel_i0e, bessel_i1e) as composites.

jax makes these primitives that XLA expands into elementwise ops and loops; mlax composes the
same expansions from its primitives (special_gamma.py, special_series.py), so values agree
with jax within a few ulp. Here: jax.lax's operand rules (floats only, one dtype, rank-0
operands broadcast, half floats computed in float32, the result weak only if every operand
is) and jax's derivative rules, as custom JVPs: the composites' own derivatives would be
those of the approximations (and of loops), not the functions' (lgamma' = digamma, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from mlax.custom_derivatives import SymbolicZero, custom_jvp
from mlax.dialect import dtypes as ir_dtypes
from mlax.lax import special_gamma, special_series
from mlax.lax.common import operands_like
from mlax.lax.elementwise import (
    abs,
    add,
    convert_element_type,
    div,
    exp,
    gt,
    log,
    log1p,
    mul,
    neg,
    select,
    sign,
    sub,
)
from mlax.lax.shape import broadcast_in_dim
from mlax.source_info import where

__all__ = ["bessel_i0e", "bessel_i1e", "betainc", "digamma", "igamma", "igamma_grad_a", "igammac", "lgamma",
           "polygamma", "random_gamma_grad", "zeta"]


def _operands(name: str, args: tuple[Any, ...]) -> list[Any]:
    """Float operands of one dtype and shape (rank-0 ones broadcast), or jax's TypeError."""
    xs = operands_like(*args)
    for x in xs:
        if not ir_dtypes.is_float(x.dtype):
            raise TypeError(f"mlax.lax.{name}: {name} does not accept dtype {x.dtype}. Accepted dtypes are "
                            f"subtypes of floating.{where()}")
    if len({x.dtype for x in xs}) > 1:
        raise TypeError(f"mlax.lax.{name} requires arguments to have the same dtypes, got "
                        f"{', '.join(str(x.dtype) for x in xs)}.{where()}")
    shapes = {x.shape for x in xs if x.shape}
    if len(shapes) > 1:
        raise TypeError(f"mlax.lax.{name}: {name} got incompatible shapes for broadcasting: "
                        f"{', '.join(str(x.shape) for x in xs)}.{where()}")
    shape = next(iter(shapes), ())
    return [broadcast_in_dim(x, shape, ()) if x.shape != shape else x for x in xs]


def _elementwise(name: str, kernel: Callable[..., Any]) -> Callable[..., Any]:
    """``kernel`` on checked operands, half floats widened to float32 and the result rounded
    back to their dtype, weak only if every operand is."""

    def fn(*args: Any) -> Any:
        xs = _operands(name, args)
        dtype, weak = xs[0].dtype, all(x.weak_type for x in xs)
        if dtype.itemsize == 2:
            xs = [convert_element_type(x, np.float32) for x in xs]
        return convert_element_type(kernel(*xs), dtype, weak)

    fn.__name__ = fn.__qualname__ = name
    return fn


def _public(name: str, core: Callable[..., Any], doc: str) -> Callable[..., Any]:
    """The documented wrapper: operands checked before the custom JVP sees them."""

    def fn(*args: Any) -> Any:
        return core(*_operands(name, args))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _is_zero(t: Any) -> bool:
    return t is None or isinstance(t, SymbolicZero)


def _tangent_sum(*terms: tuple[Any, Callable[[], Any]]) -> Any:
    """sum of tangent * coefficient() over the non-zero tangents (None if all are zero)."""
    out = None
    for t, coefficient in terms:
        if not _is_zero(t):
            term = mul(t, coefficient())
            out = term if out is None else add(out, term)
    return out


def _unsupported(t: Any) -> tuple[Any, Callable[[], Any]]:
    """A term giving NaN for a tangent jax refuses (ValueError: mlax traces each rule for
    every tangent at the call, so it cannot tell an undifferentiated operand there)."""
    return t, lambda: np.array(np.nan, t.dtype)


def _with_jvp(module: Any, name: str, rule: Callable[..., Any]) -> Any:
    """A custom_jvp of the kernel ``module.name`` whose rule is ``rule(primals, tangents)`` ->
    tangent (it sees SymbolicZero for the tangents of operands not differentiated)."""
    fn = custom_jvp(_elementwise(name, getattr(module, name)))

    def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        return fn(*primals), rule(primals, tangents)

    fn.defjvp(jvp, symbolic_zeros=True)
    return fn


# The rules compute with the plain composites (no custom JVPs of their own): tracing a rule
# then costs one kernel, not a chain of rules (lgamma -> digamma -> polygamma -> ...); second
# derivatives are those of the composites, which approximate the same functions.
_plain = {name: _elementwise(name, getattr(module, name)) for module in (special_gamma, special_series)
          for name in module.__all__}


def _igamma_dx(a: Any, x: Any) -> Any:
    """dP(a, x)/dx = x^(a-1) e^-x / Gamma(a)."""
    return exp(sub(add(neg(x), mul(sub(a, np.ones((), a.dtype)), log(x))), _plain["lgamma"](a)))


def _igamma_jvp(sign_: float) -> Callable[..., Any]:
    def rule(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> Any:
        (a, x), (ta, tx) = primals, tangents
        s = np.array(sign_, a.dtype)
        return _tangent_sum((ta, lambda: mul(s, _plain["igamma_grad_a"](a, x))),
                            (tx, lambda: mul(s, _igamma_dx(a, x))))

    return rule


def _polygamma_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> Any:
    (m, x), (tm, tx) = primals, tangents
    return _tangent_sum(_unsupported(tm), (tx, lambda: _plain["polygamma"](add(m, np.ones((), m.dtype)), x)))


def _betainc_jvp(primals: tuple[Any, Any, Any], tangents: tuple[Any, Any, Any]) -> Any:
    (a, b, x), (ta, tb, tx) = primals, tangents
    one = np.ones((), x.dtype)

    def density() -> Any:
        lgamma = _plain["lgamma"]
        lbeta = sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
        return exp(sub(add(mul(sub(b, one), log1p(neg(x))), mul(sub(a, one), log(x))), lbeta))

    return _tangent_sum(_unsupported(ta), _unsupported(tb), (tx, density))


def _i0e_jvp(primals: tuple[Any], tangents: tuple[Any]) -> Any:
    (x,), (t,) = primals, tangents
    return _tangent_sum((t, lambda: sub(_plain["bessel_i1e"](x), mul(sign(x), _plain["bessel_i0e"](x)))))


def _i1e_jvp(primals: tuple[Any], tangents: tuple[Any]) -> Any:
    """i1e' = i0e - i1e (sign(x) + 1/x), 1/2 at |x| <= eps (where 1/x would blow up)."""
    (x,), (t,) = primals, tangents

    def derivative() -> Any:
        eps = np.array(ml_dtypes.finfo(x.dtype).eps, x.dtype)
        not_tiny = gt(abs(x), eps)
        safe_x = select(not_tiny, x, broadcast_in_dim(eps, x.shape, ()))
        inv_x = div(np.ones((), x.dtype), safe_x)
        dy = sub(_plain["bessel_i0e"](safe_x), mul(_plain["bessel_i1e"](x), add(sign(safe_x), inv_x)))
        return select(not_tiny, dy, broadcast_in_dim(np.array(0.5, x.dtype), x.shape, ()))

    return _tangent_sum((t, derivative))


_lgamma = _with_jvp(special_gamma, "lgamma", lambda p, t: _tangent_sum(
    (t[0], lambda: _plain["digamma"](p[0]))))
_digamma = _with_jvp(special_gamma, "digamma", lambda p, t: _tangent_sum(
    (t[0], lambda: _plain["polygamma"](np.ones(p[0].shape, p[0].dtype), p[0]))))
_polygamma = _with_jvp(special_series, "polygamma", _polygamma_jvp)
_igamma = _with_jvp(special_gamma, "igamma", _igamma_jvp(1.0))
_igammac = _with_jvp(special_gamma, "igammac", _igamma_jvp(-1.0))
_betainc = _with_jvp(special_series, "betainc", _betainc_jvp)
_bessel_i0e = _with_jvp(special_series, "bessel_i0e", _i0e_jvp)
_bessel_i1e = _with_jvp(special_series, "bessel_i1e", _i1e_jvp)

lgamma = _public("lgamma", _lgamma, "Elementwise log |Gamma(x)|.")
digamma = _public("digamma", _digamma, "Elementwise digamma, the logarithmic derivative of Gamma.")
polygamma = _public("polygamma", _polygamma, "Elementwise polygamma, the m-th derivative of digamma "
                    "(m a natural number of x's dtype).")
zeta = _public("zeta", _elementwise("zeta", special_series.zeta), "Elementwise Hurwitz zeta "
               "``sum_n (q + n)^-x``.")
igamma = _public("igamma", _igamma, "Elementwise regularized lower incomplete gamma function P(a, x).")
igammac = _public("igammac", _igammac, "Elementwise regularized upper incomplete gamma function "
                  "Q(a, x) = 1 - P(a, x).")
igamma_grad_a = _public("igamma_grad_a", _elementwise("igamma_grad_a", special_gamma.igamma_grad_a),
                        "Elementwise derivative of P(a, x) with respect to a.")
random_gamma_grad = _public("random_gamma_grad",
                            _elementwise("random_gamma_grad", special_gamma.random_gamma_grad),
                            "Elementwise derivative of a Gamma(a, 1) sample x with respect to a at fixed "
                            "noise (implicit reparameterization).")
betainc = _public("betainc", _betainc, "Elementwise regularized incomplete beta function I_x(a, b).")
bessel_i0e = _public("bessel_i0e", _bessel_i0e, "Exponentially scaled modified Bessel function of order 0, "
                     "``exp(-|x|) I0(x)``.")
bessel_i1e = _public("bessel_i1e", _bessel_i1e, "Exponentially scaled modified Bessel function of order 1, "
                     "``exp(-|x|) I1(x)``.")
