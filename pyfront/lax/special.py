"""mlax.lax inverse trigonometric and hyperbolic functions, under jax.lax's names.

asin, acos, atan, sinh, cosh, asinh, acosh and atanh are not dialect primitives: StableHLO
has none of them either (jax emits `chlo` ops, which XLA expands into elementwise
primitives). Each is composed here from mlax primitives with case splits of the same kind:
overflow-safe forms for large arguments and cancellation-free ones near 0 and +-1, so
results agree with jax.lax within a few ulp (tests/dialect/test_lax_special.py checks every
half-precision value). Operands must be floats (lax does not promote); half precision
computes in float32 and rounds once. mlax.numpy's arcsin & co. call these.

Real operands differentiate by jax's rules for its primitives (a custom_jvp: asin' = rsqrt(1 -
x**2), acosh' = rsqrt(x**2 - 1)...), not through the composition, so derivatives agree with
jax's at the special points too: asin'(1) = inf, asinh'(0) = 1, acosh'(-2) = 1/sqrt(3).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from mlax.array import Array
from mlax.custom_derivatives import custom_jvp
from mlax.dialect import dtypes as ir_dtypes
from mlax.lax import special_complex
from mlax.lax.common import operand
from mlax.lax.elementwise import (
    abs,
    add,
    atan2,
    convert_element_type,
    div,
    eq,
    exp,
    exp2,
    expm1,
    ge,
    gt,
    log,
    log1p,
    lt,
    max,
    mul,
    ne,
    neg,
    reciprocal,
    rsqrt,
    select,
    sign,
    sqrt,
    square,
    sub,
)
from mlax.lax.shape import broadcast_in_dim
from mlax.source_info import where

__all__ = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh"]

Const = Callable[[float], Any]


Derivative = Callable[[Any, Any, Const], Any]


def _composite(name: str, body: Callable[[Any, Const], Any], doc: str,
               derivative: Derivative) -> Callable[[Any], Any]:
    """The public function ``name``: check the dtype, widen half floats, run ``body``, round back.

    ``body(x, c)`` gets the (float32 or wider) operand and ``c``, which makes a constant of
    x's dtype, shape and weak type, so the result keeps x's weak type as in jax.lax. Complex
    operands run ``name``'s form in mlax.lax.special_complex instead. A real operand's tangent
    is ``derivative(g, x, c)``, jax's rule, in x's own dtype.
    """

    def real(x: Any) -> Any:
        dtype, weak = x.dtype, x.weak_type
        if dtype.itemsize == 2:
            x = convert_element_type(x, np.float32, weak)
        return convert_element_type(body(x, _constant_maker(x)), dtype, weak)

    real.__name__ = real.__qualname__ = f"{name}_real"  # the callee, not named as the caller
    differentiable = custom_jvp(real)
    differentiable.defjvps(lambda g, ans, x: derivative(g, x, _constant_maker(x)))

    def fn(x: Any) -> Any:
        x = operand(x)
        dtype = x.dtype
        if ir_dtypes.is_complex(dtype):
            complex_body = _COMPLEX_FORMS[name]
            return complex_body(x, _constant_maker(x))
        if not ir_dtypes.is_float(dtype):
            raise TypeError(f"mlax.lax.{name}: x must have a floating-point dtype, got {dtype} (complex "
                            f"dtypes are accepted too){where()}")
        return differentiable(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _constant_maker(x: Any) -> Const:
    """Constants of x's dtype, shape and weak type."""

    def const(value: float) -> Any:
        return broadcast_in_dim(Array._wrap(np.array(value, x.dtype), x.weak_type), x.shape, ())

    return const


def _one_minus_square(x: Any, c: Const) -> Any:
    """``(1 - x)(1 + x)``: no cancellation near |x| = 1, unlike ``1 - x * x``."""
    return mul(sub(c(1), x), add(c(1), x))


def _asin(x: Any, c: Const) -> Any:
    return mul(c(2), atan2(x, add(c(1), sqrt(_one_minus_square(x, c)))))


def _acos(x: Any, c: Const) -> Any:
    half = atan2(sqrt(_one_minus_square(x, c)), add(c(1), x))
    return select(ne(x, c(-1)), mul(c(2), half), c(np.pi))


def _atan(x: Any, c: Const) -> Any:
    return atan2(x, c(1))


def _half_exps(x: Any, c: Const) -> tuple[Any, Any]:
    """``e**x / 2`` and ``e**-x / 2`` as ``exp(+-x + log 1/2)``: finite while e**|x| / 2 is."""
    return exp(add(x, c(np.log(0.5)))), exp(sub(c(np.log(0.5)), x))


def _sinh(x: Any, c: Const) -> Any:
    up, down = _half_exps(x, c)
    em1 = expm1(x)  # below |x| = 1: (e**x - 1) + (e**x - 1) / e**x, halved, keeps tiny x exact
    small = mul(c(0.5), add(em1, div(em1, add(em1, c(1)))))
    return select(lt(abs(x), c(1)), small, sub(up, down))


def _cosh(x: Any, c: Const) -> Any:
    return add(*_half_exps(x, c))


def _sqrt_max(x: Any, c: Const) -> Any:
    """Above this, x * x overflows: asinh/acosh switch to log(x) + log(2)."""
    return c(np.sqrt(float(ml_dtypes.finfo(x.dtype).max)))


def _asinh(x: Any, c: Const) -> Any:
    ax = abs(x)
    ax2 = mul(ax, ax)
    moderate = log1p(add(ax, div(ax2, add(c(1), sqrt(add(ax2, c(1)))))))
    large = add(log(ax), c(np.log(2)))
    return mul(sign(x), select(ge(ax, _sqrt_max(x, c)), large, moderate))


def _acosh(x: Any, c: Const) -> Any:
    y = sub(x, c(1))  # exact near 1, where log(x + sqrt(x * x - 1)) would lose most digits
    moderate = log1p(add(y, sqrt(mul(y, add(x, c(1))))))
    large = add(log(x), c(np.log(2)))
    # Below -1 the square root no longer yields NaN once y (x + 1) overflows: say it.
    return select(lt(x, c(-1)), c(np.nan), select(ge(x, _sqrt_max(x, c)), large, moderate))


def _atanh(x: Any, c: Const) -> Any:
    value = mul(c(0.5), sub(log1p(x), log1p(neg(x))))
    return select(gt(abs(x), c(1)), c(np.nan), value)


asin = _composite("asin", _asin, "Elementwise arcsine, ``2 atan2(x, 1 + sqrt((1 - x)(1 + x)))``.",
                  lambda g, x, c: mul(g, rsqrt(sub(c(1), square(x)))))
acos = _composite("acos", _acos, "Elementwise arccosine, ``2 atan2(sqrt((1 - x)(1 + x)), 1 + x)`` "
                  "(pi at -1).", lambda g, x, c: mul(g, neg(rsqrt(sub(c(1), square(x))))))
atan = _composite("atan", _atan, "Elementwise arctangent, ``atan2(x, 1)``.",
                  lambda g, x, c: div(g, add(c(1), square(x))))
sinh = _composite("sinh", _sinh, "Elementwise hyperbolic sine (expm1-based below |x| = 1, so accurate "
                  "near 0; no early overflow above).", lambda g, x, c: mul(g, cosh(x)))
cosh = _composite("cosh", _cosh, "Elementwise hyperbolic cosine, ``e**(x - log 2) + e**(-x - log 2)`` "
                  "(no early overflow).", lambda g, x, c: mul(g, sinh(x)))
asinh = _composite("asinh", _asinh, "Elementwise inverse hyperbolic sine (log1p form; ``log 2|x|`` where "
                   "x * x would overflow).", lambda g, x, c: mul(g, rsqrt(add(square(x), c(1)))))
acosh = _composite("acosh", _acosh, "Elementwise inverse hyperbolic cosine, ``log1p(y + sqrt(y (x + 1)))`` "
                   "with y = x - 1 (NaN below 1; ``log 2x`` where x * x would overflow).",
                   lambda g, x, c: mul(g, rsqrt(sub(square(x), c(1)))))
atanh = _composite("atanh", _atanh, "Elementwise inverse hyperbolic tangent, "
                   "``(log1p(x) - log1p(-x)) / 2`` (NaN beyond [-1, 1]).",
                   lambda g, x, c: mul(reciprocal(add(c(1), x)), div(g, sub(c(1), x))))

# The complex forms, by name: each gets the operand and its constant maker (asin & co. also the
# real asinh they are built on).
_COMPLEX_FORMS: dict[str, Callable[[Any, Const], Any]] = {
    "asin": lambda z, c: special_complex.asin(z, c, asinh),
    "acos": lambda z, c: special_complex.acos(z, c, asinh),
    "asinh": lambda z, c: special_complex.asinh(z, c, asinh),
    "acosh": lambda z, c: special_complex.acosh(z, c, asinh),
    "atan": special_complex.atan,
    "atanh": special_complex.atanh,
    "sinh": special_complex.sinh,
    "cosh": special_complex.cosh,
}


# --- logaddexp: mlax.numpy's logaddexp and logaddexp2, and lax's cumlogsumexp ----------------------


def _const_like(x: Any, value: float) -> Any:
    """``value`` in x's dtype and shape, weak where x is a weak scalar (jax's ``lax._const``)."""
    weak = x.weak_type and not x.shape
    return broadcast_in_dim(Array._wrap(np.array(value).astype(x.dtype), weak), x.shape, ())


def _replace_inf(x: Any) -> Any:
    """``x`` with +inf replaced by 0 (jax's rule for logaddexp's tangent)."""
    return select(eq(x, _const_like(x, np.inf)), _const_like(x, 0), x)


def _log_add_exp(power: Callable[[Any], Any], scale: float | None) -> Callable[[Any, Any], Any]:
    """``log_b(b**x1 + b**x2)`` of two operands of one inexact dtype (b = e with ``exp``, 2 with
    ``exp2`` and ``scale`` 1 / log 2), with jax's custom_jvp: the tangent is ``t1 * b**(x1 - out) +
    t2 * b**(x2 - out)`` (+inf read as 0), so equal arguments share it evenly (softplus'(0) is
    1/2); differentiating the formula itself would give max's 1/2 minus abs's 1/2."""

    def primal(x1: Any, x2: Any) -> Any:
        amax = max(x1, x2)
        delta = sub(x1, x2)
        tail = log1p(power(neg(abs(delta))))
        if scale is not None:
            tail = mul(_const_like(tail, scale), tail)
        return select(ne(delta, delta), add(x1, x2), add(amax, tail))

    def rule(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
        (x1, x2), (t1, t2) = primals, tangents
        out = differentiable(x1, x2)
        at = _replace_inf(out)
        return out, add(mul(t1, power(sub(_replace_inf(x1), at))), mul(t2, power(sub(_replace_inf(x2), at))))

    differentiable = custom_jvp(primal)
    differentiable.defjvp(rule)
    return differentiable


# Not jax.lax's (its operands are promoted by mlax.numpy's wrappers): lax's own composites use them.
logaddexp = _log_add_exp(exp, None)
logaddexp2 = _log_add_exp(exp2, 1 / np.log(2))
