"""mlax.numpy composite elementwise functions: rounding, float classification, where/clip,
closeness tests, and the float helpers jnp builds from several primitives (hypot, logaddexp,
sinc...). Each follows jnp's formula so results agree with JAX to the last bit where JAX's do.
(arcsin & co. are in mlax.numpy.elementwise: they call mlax.lax.asin & co.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax, prng
from mlax.core import abstractify
from mlax.lax import special as lax_special
from mlax.numpy import elementwise as ew
from mlax.numpy.dtypes import iscomplexobj
from mlax.numpy.util import (
    asarray,
    broadcast_shapes_or_raise,
    broadcast_to_shape,
    check_arraylike,
    const_like,
    promote_args,
    promote_args_inexact,
    promote_args_numeric,
    promote_dtypes,
    promote_dtypes_inexact,
    user_dtype,
)

__all__ = [
    "around", "astype", "bitwise_count", "clip",
    "copysign", "deg2rad", "degrees", "fix", "fmax", "fmin", "heaviside", "hypot",
    "isclose", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "logaddexp",
    "logaddexp2", "modf", "nan_to_num", "rad2deg", "radians", "rint", "round", "select",
    "signbit", "sinc", "trunc", "where",
]


def _is(dtype: np.dtype, kind: Any) -> bool:
    return front_dtypes.issubdtype(dtype, kind)


def _round_even(x: Any) -> Any:
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def _full(x: Any, value: Any, dtype: Any) -> Any:
    """A non-weak constant of ``dtype`` in the shape of ``x`` (jnp's ``full_like(x, v, dtype)``)."""
    shape = abstractify(x).shape
    return lax.broadcast_in_dim(asarray(np.array(value, dtype=dtype)), shape, ())


# --- rounding -----------------------------------------------------------------------------

def round(a: Any, decimals: int = 0, out: None = None) -> Any:  # noqa: A001 (jnp.round)
    """Round half to even to ``decimals`` places (float16 scales in float32, as jnp)."""
    check_arraylike("round", a)
    if out is not None:
        raise NotImplementedError("mlax.numpy.round: the 'out' argument is not supported")
    a = asarray(a)
    decimals = ew._concrete_int(decimals)
    if decimals is None:
        raise TypeError("mlax.numpy.round: 'decimals' must be a static integer")
    dtype = a.dtype
    if _is(dtype, np.integer):
        if decimals < 0:
            raise NotImplementedError("mlax.numpy.round: integer rounding to decimals < 0 is not implemented")
        return a
    if not _is(dtype, np.inexact):
        raise ValueError(f"mlax.numpy.round: cannot round arrays of dtype {dtype}")
    if decimals > np.log10(float(ml_dtypes.finfo(dtype).max)):
        return a
    if decimals == 0:
        return _round_even(a)
    x = lax.convert_element_type(a, np.float32, a.weak_type) if dtype == np.float16 else a
    factor = const_like(x, 10.0 ** decimals)
    out_ = lax.div(_round_even(lax.mul(x, factor)), factor)
    return lax.convert_element_type(out_, dtype, a.weak_type) if dtype == np.float16 else out_


around = round


def rint(x: Any, /) -> Any:
    """Round half to even; integers and booleans become the default float type."""
    check_arraylike("rint", x)
    x = asarray(x)
    if x.dtype == np.bool_ or _is(x.dtype, np.integer):
        return lax.convert_element_type(x, front_dtypes.default_float())
    return _round_even(x)


def trunc(x: Any, /) -> Any:
    """Round toward zero; integers and booleans are returned unchanged."""
    check_arraylike("trunc", x)
    x = asarray(x)
    if x.dtype == np.bool_ or _is(x.dtype, np.integer):
        return x
    return where(lax.lt(x, const_like(x, 0)), ew.ceil(x), ew.floor(x))


fix = trunc


# --- float classification and sign --------------------------------------------------------

def isfinite(x: Any, /) -> Any:
    """True where ``x`` is neither infinite nor NaN (always, for integers)."""
    check_arraylike("isfinite", x)
    x = asarray(x)
    if _is(x.dtype, np.complexfloating):  # both parts finite (jnp's)
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    if _is(x.dtype, np.floating):
        return lax.is_finite(x)
    return _full(x, True, np.bool_)


def _isinf_of_sign(name: str, sign: int | None) -> Any:
    def fn(x: Any, /) -> Any:
        check_arraylike(name, x)
        x = asarray(x)
        if _is(x.dtype, np.complexfloating):
            if sign is not None:  # as jnp's
                raise ValueError(f"mlax.numpy.{name}: isposinf/isneginf are not well defined for "
                                 "complex types")
            return lax.bitwise_or(fn(lax.real(x)), fn(lax.imag(x)))
        if not _is(x.dtype, np.floating):
            return _full(x, False, np.bool_)
        if sign is None:
            return lax.eq(lax.abs(x), const_like(x, np.inf, "never"))
        return lax.eq(x, const_like(x, sign * np.inf, "never"))

    return ew._named(name, "True where ``x`` is an infinity (of the given sign); False for integers.", fn)


isinf = _isinf_of_sign("isinf", None)
isposinf = _isinf_of_sign("isposinf", 1)
isneginf = _isinf_of_sign("isneginf", -1)


def isnan(x: Any, /) -> Any:
    """True where ``x`` is NaN (``x != x``)."""
    check_arraylike("isnan", x)
    x = asarray(x)
    return lax.ne(x, x)


_SIGNED_OF_WIDTH = {2: np.int16, 4: np.int32, 8: np.int64}


def signbit(x: Any, /) -> Any:
    """True where the sign bit is set (so for -0.0 and negative NaNs too)."""
    (x,) = promote_args("signbit", x)
    dtype = x.dtype
    if dtype == np.bool_:
        return _full(x, False, np.bool_)
    if _is(dtype, np.integer):
        return lax.lt(x, const_like(x, 0, "never"))
    bits = lax.bitcast_convert_type(x, _SIGNED_OF_WIDTH[dtype.itemsize])
    return lax.lt(bits, const_like(bits, 0, "never"))


def copysign(x1: Any, x2: Any, /) -> Any:
    """``|x1|`` with the sign bit of ``x2``."""
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    magnitude = lax.abs(x1)
    return lax.select(signbit(x2), lax.neg(magnitude), magnitude)


def heaviside(x1: Any, x2: Any, /) -> Any:
    """Step function: 0 below zero, 1 above, ``x2`` at zero (NaN stays NaN)."""
    check_arraylike("heaviside", x1, x2)
    x1_is_scalar = not abstractify(x1).shape  # jnp does not broadcast before making its constants
    x1, x2 = promote_dtypes_inexact(x1, x2)  # broadcast with no rank promotion check, as jnp
    shape = broadcast_shapes_or_raise("heaviside", x1.shape, x2.shape)
    x1, x2 = broadcast_to_shape(x1, shape), broadcast_to_shape(x2, shape)
    weak = x1.weak_type and x1_is_scalar
    zero = const_like(x1, 0, weak)
    at_zero = lax.select(isnan(x1), x1, x2)
    above = lax.select(lax.gt(x1, zero), const_like(x1, 1, weak), at_zero)
    return lax.select(lax.lt(x1, zero), zero, above)


# --- composite float functions ------------------------------------------------------------

def _scale(name: str, factor: float) -> Any:
    def fn(x: Any, /) -> Any:
        (x,) = promote_args_inexact(name, x)
        return lax.mul(x, const_like(x, factor))

    return ew._named(name, f"``x * {factor!r}`` in the inexact dtype of ``x``.", fn)


deg2rad = radians = _scale("deg2rad", np.pi / 180)
rad2deg = degrees = _scale("rad2deg", 180 / np.pi)


def hypot(x1: Any, x2: Any, /) -> Any:
    """``sqrt(x1**2 + x2**2)`` without overflow: scaled by the larger magnitude."""
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    a, b = lax.abs(x1), lax.abs(x2)
    inf = const_like(a, np.inf)
    any_inf = lax.bitwise_or(lax.eq(a, inf), lax.eq(b, inf))
    big, small = lax.max(a, b), lax.min(a, b)
    zero, one = const_like(big, 0), const_like(big, 1, "like")
    big_is_zero = lax.eq(big, zero)
    ratio = lax.div(small, lax.select(big_is_zero, one, big))
    scaled = lax.mul(big, lax.sqrt(lax.add(one, lax.mul(ratio, ratio))))
    return lax.select(any_inf, inf, lax.select(big_is_zero, big, scaled))


def _logaddexp_base(name: str, differentiable: Callable[[Any, Any], Any], base: str) -> Any:
    """logaddexp / logaddexp2: lax's (mlax.lax.special, with jax's derivative) on the promoted
    arguments."""

    def fn(x1: Any, x2: Any, /) -> Any:
        x1, x2 = promote_args_inexact(name, x1, x2)
        return differentiable(x1, x2)

    return ew._named(name, f"``log{base}(b**x1 + b**x2)`` without overflow.", fn)


logaddexp = _logaddexp_base("logaddexp", lax_special.logaddexp, "")
logaddexp2 = _logaddexp_base("logaddexp2", lax_special.logaddexp2, "2")


def sinc(x: Any, /) -> Any:
    """``sin(pi x) / (pi x)``, exactly 1 at 0."""
    (x,) = promote_args_inexact("sinc", x)
    is_zero = lax.eq(x, const_like(x, 0))
    one = const_like(x, 1)
    pi_x = lax.mul(const_like(x, np.pi), x)
    safe = lax.select(is_zero, one, pi_x)
    return lax.select(is_zero, one, lax.div(lax.sin(safe), safe))


def modf(x: Any, /, out: None = None) -> tuple[Any, Any]:
    """``(fractional part, integral part)``, both with the sign of ``x``."""
    if out is not None:
        raise NotImplementedError("mlax.numpy.modf: the 'out' argument is not supported")
    (x,) = promote_args_inexact("modf", x)
    whole = lax.select(lax.ge(x, const_like(x, 0)), ew.floor(x), ew.ceil(x))
    return ew.subtract(x, whole), whole


def bitwise_count(x: Any, /) -> Any:
    """The number of set bits of ``|x|``, as uint8."""
    (x,) = promote_args_numeric("bitwise_count", x)
    return lax.convert_element_type(lax.population_count(ew.absolute(x)), np.uint8)


def fmax(x1: Any, x2: Any) -> Any:
    """Maximum that ignores NaN (a NaN only wins against another NaN)."""
    return where(ew.logical_or(ew.greater(x1, x2), isnan(x2)), x1, x2)


def fmin(x1: Any, x2: Any) -> Any:
    """Minimum that ignores NaN (a NaN only wins against another NaN)."""
    return where(ew.logical_or(ew.less(x1, x2), isnan(x2)), x1, x2)


def clip(arr: Any = None, /, min: Any = None, max: Any = None) -> Any:  # noqa: A002 (jnp names)
    """Limit values to ``[min, max]`` (either may be None); dtypes promote as maximum/minimum."""
    if arr is None:
        raise ValueError("mlax.numpy.clip: no input was provided")
    check_arraylike("clip", arr)
    if any(iscomplexobj(t) for t in (arr, min, max)):
        raise ValueError("mlax.numpy.clip received a complex value either through the input or the min/max "
                         "keywords. Complex values have no ordering and cannot be clipped (as jax). Please "
                         "convert to a real value or array by taking the real or imaginary components via "
                         "mlax.numpy.real/imag respectively.")
    if min is not None:
        arr = ew.maximum(min, arr)
    if max is not None:
        arr = ew.minimum(max, arr)
    return asarray(arr)


def where(condition: Any, x: Any = None, y: Any = None, /, *, size: int | None = None,
          fill_value: Any = None) -> Any:
    """``x`` where ``condition`` (nonzero) holds, else ``y``; the one-argument form is ``nonzero``."""
    if x is None and y is None:
        from mlax.numpy.sorting import nonzero  # sorting imports this module

        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("mlax.numpy.where: either both or neither of x and y must be given")
    if size is not None or fill_value is not None:
        raise ValueError("mlax.numpy.where: size and fill_value only apply to the one-argument form")
    if prng.is_key(x) or prng.is_key(y):  # keys: select their data, the condition over key dimensions
        if not (prng.is_key(x) and prng.is_key(y) and x.dtype == y.dtype):
            got = [str(getattr(v, "dtype", type(v).__name__)) for v in (x, y)]
            raise TypeError(f"mlax.numpy.where: key arrays select only among keys of one dtype, got {got}")
        condition = ew.to_bool(asarray(condition))
        shape = broadcast_shapes_or_raise("where", condition.shape, x.shape, y.shape)
        words = prng.key_shape(x.dtype)
        data = [broadcast_to_shape(k._base_array, (*shape, *words)) for k in (x, y)]
        mask = broadcast_to_shape(lax.expand_dims(broadcast_to_shape(condition, shape),
                                                  tuple(range(len(shape), len(shape) + len(words)))),
                                  (*shape, *words))
        return x._with(lax.select(mask, *data))
    check_arraylike("where", condition, x, y)
    condition = ew.to_bool(asarray(condition))
    x, y = promote_dtypes(x, y)
    shape = broadcast_shapes_or_raise("where", *(abstractify(v).shape for v in (condition, x, y)))
    condition, x, y = (broadcast_to_shape(v, shape) for v in (condition, x, y))
    return lax.select(condition, x, y)


def select(condlist: Any, choicelist: Any, default: Any = 0) -> Any:
    """``choicelist[i]`` where ``condlist[i]`` is the first true condition, else ``default``."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"mlax.numpy.select: condlist must have length equal to choicelist "
                         f"({len(condlist)} vs {len(choicelist)})")
    if not condlist:
        raise ValueError("mlax.numpy.select: condlist must be non-empty")
    check_arraylike("select", *condlist, *choicelist, default)
    default, *choices = promote_dtypes(default, *choicelist)
    out = default
    for condition, choice in reversed(list(zip(condlist, choices, strict=True))):
        cond = ew.to_bool(asarray(condition))
        shape = broadcast_shapes_or_raise("select", *(abstractify(v).shape for v in (cond, choice, out)))
        cond, choice, out = (broadcast_to_shape(v, shape) for v in (cond, choice, out))
        out = lax.select(cond, choice, out)
    return out


def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> Any:
    """Replace NaN by ``nan`` and infinities by ``posinf``/``neginf`` (default: the finite extremes)."""
    check_arraylike("nan_to_num", x)
    x = asarray(x)
    dtype = x.dtype
    if not _is(dtype, np.inexact):
        return x
    info = ml_dtypes.finfo(dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = where(isnan(x), asarray(nan, dtype=dtype), x)
    out = where(isposinf(out), asarray(posinf, dtype=dtype), out)
    return where(isneginf(out), asarray(neginf, dtype=dtype), out)


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    """``|a - b| <= atol + rtol * |b|`` elementwise (infinities must match exactly). As jax, for
    complex arrays ``|.|`` is the modulus and the tolerances are real (an imaginary part of
    theirs is dropped), and a NaN anywhere in an element makes it unequal unless ``equal_nan``."""
    if prng.is_key(a) or prng.is_key(b):  # keys: equality, as jax's for its extended dtypes
        if not (prng.is_key(a) and prng.is_key(b) and a.dtype == b.dtype):
            raise TypeError(f"isclose does not accept dtypes {getattr(a, 'dtype', type(a).__name__)}, "
                            f"{getattr(b, 'dtype', type(b).__name__)}.")
        return a == b
    a, b = promote_args_inexact("isclose", a, b)
    dtype = np.dtype(a.dtype)
    if dtype.kind == "c":
        dtype = np.zeros((), dtype).real.dtype
    rtol = lax.convert_element_type(rtol, dtype)
    atol = lax.convert_element_type(atol, dtype)
    shape = abstractify(a).shape
    rtol, atol = broadcast_to_shape(rtol, shape), broadcast_to_shape(atol, shape)
    in_range = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol, lax.mul(rtol, lax.abs(b))))
    out = ew.logical_or(lax.eq(a, b), ew.logical_and(isfinite(b), in_range))
    if equal_nan:
        out = ew.logical_or(out, ew.logical_and(isnan(a), isnan(b)))
    return out





def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    """Convert to ``dtype`` (canonicalised; None means the default float); never weakly typed."""
    check_arraylike("astype", x)
    if prng.is_key(x) and prng.is_key_dtype(dtype):
        if dtype != x.dtype:
            raise TypeError(f"mlax.numpy.astype: cannot convert keys of {x.dtype} to {dtype}")
        return x  # keys to their own dtype: the keys, as jax's
    target = front_dtypes.default_float() if dtype is None else user_dtype("astype", dtype)
    return lax.convert_element_type(asarray(x), target)
