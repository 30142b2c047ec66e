"""mlax.numpy elementwise math: promotion and broadcasting as jnp, then mlax.lax primitives.

Most functions are one primitive after one of three promotion rules (dtype-preserving,
to-inexact, to-numeric), built by the factories below. The rest (Python-style integer
division and remainder, integer powers, shifts) spell out jnp's exact semantics, including
division by zero: ``x // 0`` and ``x % 0`` follow what jnp computes on XLA.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax, prng
from mlax.core import Tracer, abstractify
from mlax.numpy.util import (
    asarray,
    broadcast_shapes_or_raise,
    broadcast_to_shape,
    check_arraylike,
    const_like,
    promote_args,
    promote_args_inexact,
    promote_args_numeric,
)

__all__ = [
    "absolute", "abs", "acos", "acosh", "add", "arccos", "arccosh", "arcsin", "arcsinh", "arctan",
    "arctan2", "arctanh", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and", "bitwise_invert",
    "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "cbrt",
    "ceil", "cos", "cosh", "divide", "divmod", "equal", "exp", "exp2", "expm1", "fabs", "float_power",
    "floor", "floor_divide", "fmod", "greater", "greater_equal", "invert", "left_shift", "less",
    "less_equal", "log", "log10", "log1p", "log2", "logical_and", "logical_not", "logical_or",
    "logical_xor", "maximum", "minimum", "mod", "multiply", "negative", "nextafter", "not_equal",
    "positive", "pow", "power", "reciprocal", "remainder", "right_shift", "sign", "sin", "sinh",
    "sqrt", "square", "subtract", "tan", "tanh", "true_divide",
]

Promote = Callable[..., list[Any]]


def _prim(name: str) -> Callable[..., Any]:
    """The mlax.lax primitive ``name``, looked up at call time."""
    return getattr(lax, name)


def _named(name: str, doc: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _unary(name: str, prim: str, promote: Promote, doc: str) -> Callable[..., Any]:
    def fn(x: Any, /) -> Any:
        return _prim(prim)(*promote(name, x))

    return _named(name, doc, fn)


def _binary(name: str, prim: str, promote: Promote, doc: str) -> Callable[..., Any]:
    def fn(x1: Any, x2: Any, /) -> Any:
        return _prim(prim)(*promote(name, x1, x2))

    return _named(name, doc, fn)


def _inexact(name: str, prim: str) -> Callable[..., Any]:
    return _unary(name, prim, promote_args_inexact,
                  f"Elementwise ``lax.{prim}``; integers and booleans become floats first.")


def _inexact2(name: str, prim: str) -> Callable[..., Any]:
    return _binary(name, prim, promote_args_inexact,
                   f"Elementwise ``lax.{prim}`` after promotion to a common inexact dtype.")


def _keep(name: str, prim: str) -> Callable[..., Any]:
    return _binary(name, prim, promote_args,
                   f"Elementwise ``lax.{prim}`` after JAX's promotion and broadcasting.")


def _is(dtype: np.dtype, kind: Any) -> bool:
    return front_dtypes.issubdtype(dtype, kind)


def to_bool(x: Any) -> Any:
    """``x != 0`` unless ``x`` is already boolean (jnp's truth value of numbers)."""
    if abstractify(x).dtype == np.bool_:
        return x
    return lax.ne(x, const_like(x, 0))


# --- unary math: integer inputs become floats (float32; float64 for 64-bit ints) -----------

exp = _inexact("exp", "exp")
exp2 = _inexact("exp2", "exp2")
expm1 = _inexact("expm1", "expm1")
log = _inexact("log", "log")
log1p = _inexact("log1p", "log1p")
sqrt = _inexact("sqrt", "sqrt")
cbrt = _inexact("cbrt", "cbrt")
sin = _inexact("sin", "sin")
cos = _inexact("cos", "cos")
tan = _inexact("tan", "tan")
tanh = _inexact("tanh", "tanh")
arcsin = asin = _inexact("arcsin", "asin")
arccos = acos = _inexact("arccos", "acos")
arctan = atan = _inexact("arctan", "atan")
sinh = _inexact("sinh", "sinh")
cosh = _inexact("cosh", "cosh")
arcsinh = asinh = _inexact("arcsinh", "asinh")
arccosh = acosh = _inexact("arccosh", "acosh")
arctanh = atanh = _inexact("arctanh", "atanh")
fabs = _inexact("fabs", "abs")


def log2(x: Any, /) -> Any:
    """Base-2 logarithm, computed as jnp does: ``log(x) / log(2)`` in x's dtype."""
    (x,) = promote_args_inexact("log2", x)
    return lax.div(lax.log(x), lax.log(const_like(x, 2, "never")))


def log10(x: Any, /) -> Any:
    """Base-10 logarithm, computed as jnp does: ``log(x) * (1 / log(10))``."""
    (x,) = promote_args_inexact("log10", x)
    return lax.mul(lax.log(x), const_like(x, 1 / np.log(10), "never"))


# --- unary, dtype-preserving --------------------------------------------------------------

negative = _unary("negative", "neg", promote_args, "Elementwise ``-x`` (integers wrap; bool is an error).")
sign = _unary("sign", "sign", promote_args, "Elementwise sign: -1, 0 or 1 (NaN stays NaN).")
bitwise_not = invert = bitwise_invert = _unary(
    "bitwise_not", "bitwise_not", promote_args, "Bitwise not of integers; logical not of booleans.")


def positive(x: Any, /) -> Any:
    """``+x``: the promoted value itself."""
    (x,) = promote_args("positive", x)
    return x


def absolute(x: Any, /) -> Any:
    """``|x|``; booleans and unsigned integers are returned unchanged (they are never negative)."""
    (x,) = promote_args("absolute", x)
    dtype = x.dtype
    if dtype == np.bool_ or _is(dtype, np.unsignedinteger):
        return x
    return lax.abs(x)


abs = absolute  # noqa: A001 (jnp.abs)


def _integral_passthrough(name: str, prim: str) -> Callable[..., Any]:
    def fn(x: Any, /) -> Any:
        (x,) = promote_args(name, x)
        if x.dtype == np.bool_ or _is(x.dtype, np.integer):
            return x
        return _prim(prim)(x)

    return _named(name, f"Elementwise ``lax.{prim}``; integers and booleans are already integral.", fn)


floor = _integral_passthrough("floor", "floor")
ceil = _integral_passthrough("ceil", "ceil")


def square(x: Any, /) -> Any:
    """``x * x``; booleans become int32 as in jnp."""
    (x,) = promote_args_numeric("square", x)
    return lax.square(x)


def reciprocal(x: Any, /) -> Any:
    """``1 / x`` in the inexact dtype of ``x``."""
    (x,) = promote_args_inexact("reciprocal", x)
    return lax.integer_pow(x, -1)


# --- binary arithmetic --------------------------------------------------------------------

def add(x1: Any, x2: Any, /) -> Any:
    """``x1 + x2``; on booleans, logical or (as jnp)."""
    x1, x2 = promote_args("add", x1, x2)
    return lax.bitwise_or(x1, x2) if x1.dtype == np.bool_ else lax.add(x1, x2)


def multiply(x1: Any, x2: Any, /) -> Any:
    """``x1 * x2``; on booleans, logical and (as jnp)."""
    x1, x2 = promote_args("multiply", x1, x2)
    return lax.bitwise_and(x1, x2) if x1.dtype == np.bool_ else lax.mul(x1, x2)


subtract = _keep("subtract", "sub")
maximum = _keep("maximum", "max")
minimum = _keep("minimum", "min")
true_divide = divide = _inexact2("true_divide", "div")
arctan2 = atan2 = _inexact2("arctan2", "atan2")
nextafter = _inexact2("nextafter", "nextafter")
float_power = _inexact2("float_power", "pow")


def _float_divmod(x1: Any, x2: Any) -> tuple[Any, Any]:
    """Python's float ``divmod``: the remainder takes the divisor's sign; the quotient is integral."""
    zero = const_like(x1, 0)
    mod = lax.rem(x1, x2)
    dividend = lax.select(lax.eq(x2, zero), x1, lax.sub(x1, mod))
    div = lax.div(dividend, x2)
    fix = lax.bitwise_and(lax.ne(mod, zero), lax.ne(lax.sign(x2), lax.sign(mod)))
    mod = lax.select(fix, lax.add(mod, x2), mod)
    div = lax.select(fix, subtract(div, 1.0), div)
    return lax.round(div), mod


def _int_floor_divide(x1: Any, x2: Any) -> Any:
    """Truncating division corrected toward -inf (x // 0 is what XLA's x / 0 gives, minus the fix)."""
    quotient = lax.div(x1, x2)
    if _is(x1.dtype, np.unsignedinteger):
        return quotient
    zero = const_like(x1, 0)
    fix = lax.bitwise_and(lax.ne(lax.sign(x1), lax.sign(x2)), lax.ne(lax.rem(x1, x2), zero))
    return lax.select(fix, subtract(quotient, 1), quotient)


def floor_divide(x1: Any, x2: Any, /) -> Any:
    """``x1 // x2`` with Python semantics (rounds toward -inf); booleans compute in int32."""
    x1, x2 = promote_args_numeric("floor_divide", x1, x2)
    if _is(x1.dtype, np.integer):
        return _int_floor_divide(x1, x2)
    return _float_divmod(x1, x2)[0]


def _nonzero_divisor(x2: Any) -> Any:
    """Integer divisors of 0 replaced by 1, so ``x % 0 == 0`` as in jnp."""
    if not _is(x2.dtype, np.integer):
        return x2
    return lax.select(lax.eq(x2, const_like(x2, 0)), const_like(x2, 1, "like"), x2)


def remainder(x1: Any, x2: Any, /) -> Any:
    """``x1 % x2`` with Python semantics: the result has the divisor's sign; ``x % 0`` is 0 for ints."""
    x1, x2 = promote_args_numeric("remainder", x1, x2)
    x2 = _nonzero_divisor(x2)
    zero = const_like(x1, 0)
    trunc = lax.rem(x1, x2)
    fix = lax.bitwise_and(lax.ne(lax.lt(trunc, zero), lax.lt(x2, zero)), lax.ne(trunc, zero))
    return lax.select(fix, lax.add(trunc, x2), trunc)


mod = remainder


def fmod(x1: Any, x2: Any, /) -> Any:
    """C's ``fmod``: the remainder takes the dividend's sign; ``x % 0`` is 0 for ints (but, as in
    jnp, ``x`` for booleans, which divide as int32 without the zero-divisor fix)."""
    check_arraylike("fmod", x1, x2)
    booleans = front_dtypes.result_type(x1, x2) == np.bool_
    x1, x2 = promote_args_numeric("fmod", x1, x2)
    return lax.rem(x1, x2 if booleans else _nonzero_divisor(x2))


def divmod(x1: Any, x2: Any, /) -> tuple[Any, Any]:  # noqa: A001 (jnp.divmod)
    """``(x1 // x2, x1 % x2)`` with Python semantics."""
    a, b = promote_args_numeric("divmod", x1, x2)
    if _is(a.dtype, np.integer):
        return _int_floor_divide(a, b), remainder(a, b)
    return _float_divmod(a, b)


def _concrete_int(x: Any) -> int | None:
    """``x`` as a Python int when it is a concrete integer scalar, else None."""
    if isinstance(x, Tracer):
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def _pow_int_int(x1: Any, x2: Any) -> Any:
    """Integer power by binary exponentiation over the 6 low bits of the exponent (as jnp).

    Larger exponents overflow anyway; negative exponents give what those bits give."""
    zero, one = const_like(x2, 0, "never"), const_like(x2, 1, "never")
    acc = lax.select(lax.bitwise_and(lax.eq(x1, zero), lax.ne(x2, zero)), zero, one)
    for _ in range(6):
        acc = lax.select(lax.ne(lax.bitwise_and(x2, one), zero), lax.mul(acc, x1), acc)
        x1 = lax.mul(x1, x1)
        x2 = lax.shift_right_logical(x2, one)
    return acc


def power(x1: Any, x2: Any, /) -> Any:
    """``x1 ** x2`` as jnp: a concrete integer exponent is exact repeated multiplication
    (``lax.integer_pow``); integer bases use binary exponentiation; a float base with an
    integer exponent keeps the base's dtype."""
    check_arraylike("power", x1, x2)
    exponent = _concrete_int(x2)
    if exponent is not None:
        (base,) = promote_args_numeric("power", x1)
        if exponent < 0 and _is(base.dtype, np.integer):
            raise TypeError(f"mlax.numpy.power: integers cannot be raised to negative powers, got "
                             f"{base.dtype}**{exponent}")
        return lax.integer_pow(base, exponent)
    a, b = promote_args_numeric("power", x1, x2)
    if _is(a.dtype, np.integer):
        return _pow_int_int(a, b)
    base, exp_ = asarray(x1), asarray(x2)
    if _is(base.dtype, np.inexact) and _is(exp_.dtype, np.integer):
        # No promotion with the integer exponent: the result keeps the base's dtype and weak type.
        shape = broadcast_shapes_or_raise("power", base.shape, exp_.shape)
        return lax.pow(broadcast_to_shape(base, shape), broadcast_to_shape(exp_, shape))
    return lax.pow(a, b)


pow = power  # noqa: A001 (jnp.pow)


# --- comparisons, logic and bits ----------------------------------------------------------

def _keys_compared(name: str, method: str) -> Callable[..., Any]:
    """``jnp.equal`` / ``not_equal``: numbers as ``_keep``; key arrays compare as keys (the
    key array's own ``==`` / ``!=``), as jax's."""
    dunder = {"eq": "__eq__", "ne": "__ne__"}[method]

    def fn(x1: Any, x2: Any, /) -> Any:  # promotes itself: rank promotion checks fn's caller
        if prng.is_key(x1):
            return getattr(x1, dunder)(x2)
        if prng.is_key(x2):
            return getattr(x2, dunder)(x1)
        return _prim(method)(*promote_args(name, x1, x2))

    return _named(name, f"Elementwise ``lax.{method}`` after JAX's promotion and broadcasting.", fn)


equal = _keys_compared("equal", "eq")
not_equal = _keys_compared("not_equal", "ne")


def _ordering(name: str, prim: str) -> Callable[..., Any]:
    """An ordering comparison; complex values compare lexicographically, (real, imag), as jnp's."""

    def fn(x1: Any, x2: Any, /) -> Any:
        x, y = promote_args(name, x1, x2)
        compare = _prim(prim)
        if not _is(x.dtype, np.complexfloating):
            return compare(x, y)
        real_x, real_y = lax.real(x), lax.real(y)
        return lax.select(lax.eq(real_x, real_y), compare(lax.imag(x), lax.imag(y)), compare(real_x, real_y))

    return _named(name, f"Elementwise ``lax.{prim}`` after JAX's promotion and broadcasting "
                        "(complex: lexicographic).", fn)


less = _ordering("less", "lt")
less_equal = _ordering("less_equal", "le")
greater = _ordering("greater", "gt")
greater_equal = _ordering("greater_equal", "ge")
bitwise_and = _keep("bitwise_and", "bitwise_and")
bitwise_or = _keep("bitwise_or", "bitwise_or")
bitwise_xor = _keep("bitwise_xor", "bitwise_xor")


def _logical(name: str, prim: str) -> Callable[..., Any]:
    def fn(x1: Any, x2: Any, /) -> Any:
        a, b = promote_args(name, x1, x2)
        return _prim(prim)(to_bool(a), to_bool(b))

    return _named(name, f"Truth-value ``{prim}``: nonzero numbers count as True.", fn)


logical_and = _logical("logical_and", "bitwise_and")
logical_or = _logical("logical_or", "bitwise_or")
logical_xor = _logical("logical_xor", "bitwise_xor")


def logical_not(x: Any, /) -> Any:
    """Truth-value not: nonzero numbers count as True."""
    (x,) = promote_args("logical_not", x)
    return lax.bitwise_not(to_bool(x))


def left_shift(x1: Any, x2: Any, /) -> Any:
    """``x1 << x2``; shifting by the bit width or more gives 0."""
    return lax.shift_left(*promote_args_numeric("left_shift", x1, x2))


def right_shift(x1: Any, x2: Any, /) -> Any:
    """``x1 >> x2``: arithmetic for signed integers, logical for unsigned ones."""
    a, b = promote_args_numeric("right_shift", x1, x2)
    if _is(a.dtype, np.unsignedinteger):
        return lax.shift_right_logical(a, b)
    return lax.shift_right_arithmetic(a, b)


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift
