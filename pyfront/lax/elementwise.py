"""mlax.lax elementwise primitives: thin, documented wrappers over `bind`.

Operands must already agree in dtype (lax does not promote) and in shape, except that, as in
jax.lax, rank-0 operands of binary ops broadcast; Python scalars mixed with arrays take the
arrays' dtype.
"""

from __future__ import annotations

import enum
import operator
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax.array import Array
from mlax.core import bind, with_weak_type
from mlax.custom_derivatives import custom_jvp
from mlax.dialect import dtypes as ir_dtypes
from mlax.errors import user_error
from mlax.lax.common import operand, operands_like, reject_bool
from mlax.lax.shape import broadcast_in_dim


def _agree(*xs: Any) -> list[Any]:
    """Operands of a binary op: scalars take the arrays' dtype, rank-0 ones the others' shape."""
    xs = operands_like(*xs)
    shape = next((x.shape for x in xs if x.shape), ())
    return [broadcast_in_dim(x, shape, ()) if not x.shape and shape else x for x in xs]


def _unary(name: str, doc: str, op: str | None = None) -> Any:
    def fn(x: Any) -> Any:
        return bind(op or name, operand(x))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _binary(name: str, doc: str, op: str | None = None, numeric: bool = False) -> Any:
    def fn(x: Any, y: Any) -> Any:
        xs = _agree(x, y)
        if numeric:
            reject_bool(name, *xs)
        return bind(op or name, *xs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _comparison(name: str, direction: str) -> Any:
    def fn(x: Any, y: Any) -> Any:
        return bind("compare", *_agree(x, y), comparison_direction=direction)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise comparison ({direction}); a boolean array. NaN compares unordered."
    return fn


neg = _unary("neg", "Elementwise negation -x.")
abs = _unary("abs", "Elementwise |x| (|INT_MIN| wraps).")
sign = _unary("sign", "Elementwise sign: -1, 0 or 1 (keeps -0.0 and NaN).")
floor = _unary("floor", "Elementwise round toward -inf.")
ceil = _unary("ceil", "Elementwise round toward +inf.")
exp = _unary("exp", "Elementwise e**x.")
exp2 = _unary("exp2", "Elementwise 2**x.")
expm1 = _unary("expm1", "Elementwise e**x - 1, accurate near 0.")
log = _unary("log", "Elementwise natural logarithm.")
log1p = _unary("log1p", "Elementwise log(1 + x), accurate near 0.")
sqrt = _unary("sqrt", "Elementwise square root.")
rsqrt = _unary("rsqrt", "Elementwise 1 / sqrt(x).")
cbrt = _unary("cbrt", "Elementwise cube root.")
sin = _unary("sin", "Elementwise sine.")
cos = _unary("cos", "Elementwise cosine.")
tan = _unary("tan", "Elementwise tangent.")
tanh = _unary("tanh", "Elementwise hyperbolic tangent.")
logistic = _unary("logistic", "Elementwise sigmoid 1 / (1 + e**-x).")
erf = _unary("erf", "Elementwise error function.")
erfc = _unary("erfc", "Elementwise complementary error function 1 - erf(x), accurate for large x.")
erf_inv = _unary("erf_inv", "Elementwise inverse error function.")
is_finite = _unary("is_finite", "Elementwise test for finite values (not inf, not NaN).")
bitwise_not = _unary("bitwise_not", "Elementwise bitwise not (logical not on booleans).", "not")
population_count = _unary("population_count", "Elementwise number of set bits.")

add = _binary("add", "Elementwise x + y (operands of one shape and dtype).", numeric=True)
sub = _binary("sub", "Elementwise x - y.")
mul = _binary("mul", "Elementwise x * y.", numeric=True)
div = _binary("div", "Elementwise x / y; integers truncate toward zero (x / 0 = -1 or all ones).")
rem = _binary("rem", "Elementwise remainder with the sign of x (x % 0 = x for integers).")
max = _binary("max", "Elementwise maximum; NaN propagates.")
min = _binary("min", "Elementwise minimum; NaN propagates.")
atan2 = _binary("atan2", "Elementwise four-quadrant arctangent of x / y.")
bitwise_and = _binary("bitwise_and", "Elementwise bitwise and (logical on booleans).", "and")
bitwise_or = _binary("bitwise_or", "Elementwise bitwise or (logical on booleans).", "or")
bitwise_xor = _binary("bitwise_xor", "Elementwise bitwise xor (logical on booleans).", "xor")
shift_left = _binary("shift_left", "Elementwise x << y (0 once y reaches the bit width).")
shift_right_logical = _binary("shift_right_logical", "Elementwise logical x >> y (zero fill).")
shift_right_arithmetic = _binary("shift_right_arithmetic", "Elementwise arithmetic x >> y (sign fill).")
nextafter = _binary("nextafter", "Elementwise next representable value after x toward y.")

eq = _comparison("eq", "EQ")
ne = _comparison("ne", "NE")
lt = _comparison("lt", "LT")
le = _comparison("le", "LE")
gt = _comparison("gt", "GT")
ge = _comparison("ge", "GE")


class RoundingMethod(enum.IntEnum):
    """Tie-breaking of `round`, numbered as `jax.lax.RoundingMethod`."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x: Any, rounding_method: Any = RoundingMethod.AWAY_FROM_ZERO) -> Any:
    """Elementwise round to integral values; ties away from zero unless ``TO_NEAREST_EVEN``.

    ``rounding_method`` is a `RoundingMethod` (or JAX's), 0/1, or a name such as
    ``"to_nearest_even"``.
    """
    if isinstance(rounding_method, str):
        key = rounding_method.strip().upper()
        method = RoundingMethod.__members__.get(key)
    else:
        method = next((m for m in RoundingMethod if m == rounding_method), None)
    if method is None:
        raise ValueError(f"mlax.lax.round: unknown rounding_method {rounding_method!r}; use "
                         f"{[m.name for m in RoundingMethod]} or their values 0/1")
    return bind("round", operand(x), rounding_method=method.name.lower())


def pow(x: Any, y: Any) -> Any:
    """Elementwise x ** y: float or complex ** the same, float or complex ** int (y converted to
    x's type), or int ** int."""
    x, y = _agree(x, y)
    if ir_dtypes.is_inexact(x.dtype) and ir_dtypes.is_int(y.dtype):
        y = convert_element_type(y, x.dtype, weak_type=y.weak_type)
    return bind("pow", x, y)


def _power(x: Any, y: int) -> Any:
    """x ** y for y != 0, by repeated squaring and multiplication (as JAX); 1 / x**-y below 0."""
    acc, base, n = None, x, -y if y < 0 else y
    while n:
        if n & 1:
            acc = base if acc is None else mul(acc, base)
        n >>= 1
        if n:
            base = mul(base, base)
    return div(1, acc) if y < 0 else acc


# Below -1 the product rule through 1 / x**-y would give 0 * inf = NaN at x = 0 (and at inf):
# jax's rule y * x**(y - 1) gives -inf / +inf there, as for every other x.
_negative_power = custom_jvp(_power, nondiff_argnums=(1,))


@_negative_power.defjvp
def _negative_power_jvp(y: int, primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    scale = with_weak_type(Array._wrap(np.full(x.shape, y, x.dtype)), x.weak_type)
    return _negative_power(x, y), mul(t, mul(scale, _negative_power(x, y - 1)))


def integer_pow(x: Any, y: int) -> Any:
    """x ** y for a static integer ``y``, by repeated squaring and multiplication (as JAX); its
    derivative is jax's ``y * x**(y - 1)``."""
    x, y = operand(x), operator.index(y)
    if ir_dtypes.is_bool(x.dtype):
        raise TypeError("mlax.lax.integer_pow: x must be a number, got dtype bool")
    if y < 0 and ir_dtypes.is_int(x.dtype):
        raise TypeError(f"mlax.lax.integer_pow: integers cannot be raised to negative powers, "
                        f"got {x.dtype} ** {y}")
    if y == 0:
        return with_weak_type(Array._wrap(np.ones(x.shape, x.dtype)), x.weak_type)
    return _negative_power(x, y) if y < -1 and ir_dtypes.is_inexact(x.dtype) else _power(x, y)


def square(x: Any) -> Any:
    """Elementwise x * x."""
    return integer_pow(x, 2)


def reciprocal(x: Any) -> Any:
    """Elementwise 1 / x (floats)."""
    return integer_pow(x, -1)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where ``pred`` is true, else ``on_false``; ``pred`` is boolean, of the cases'
    shape or a scalar."""
    on_true, on_false = operands_like(on_true, on_false)
    return bind("select", operand(pred), on_true, on_false)


def broadcast_select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """`select` with the three broadcast to one shape, numpy style (the cases of one dtype, as
    select's): jnp.where's broadcasting for lax's composites, which are written below jnp."""
    pred, (on_true, on_false) = operand(pred), operands_like(on_true, on_false)
    shape = np.broadcast_shapes(pred.shape, on_true.shape, on_false.shape)

    def grown(x: Any) -> Any:
        return x if x.shape == shape else broadcast_in_dim(x, shape, range(len(shape) - x.ndim, len(shape)))

    return select(grown(pred), grown(on_true), grown(on_false))


def clamp(min: Any, x: Any, max: Any) -> Any:
    """Elementwise min(max(x, min), max); ``min``/``max`` are scalars or of x's shape."""
    return bind("clamp", *operands_like(min, x, max))


def convert_element_type(x: Any, new_dtype: Any, weak_type: bool = False) -> Any:
    """Cast ``x`` to ``new_dtype`` (StableHLO convert semantics); no op when it already is."""
    x = operand(x)
    new_dtype = _new_dtype(new_dtype, "convert_element_type")
    if x.dtype == new_dtype:
        return with_weak_type(x, weak_type)
    return with_weak_type(bind("convert", x, new_dtype=new_dtype), weak_type)


def complex(x: Any, y: Any) -> Any:  # noqa: A001 (jax.lax.complex)
    """Elementwise x + i y of two f32 (complex64) or two f64 (complex128) operands."""
    xs = _agree(x, y)
    for position, part in enumerate(xs):
        if part.dtype not in (np.float32, np.float64):
            raise TypeError(f"complex does not accept dtype {part.dtype} at position {position}. Accepted "
                            f"dtypes at position {position} are subtypes of float32, float64.")
    return bind("complex", *xs)


def _complex_part(name: str, doc: str) -> Any:
    def fn(x: Any) -> Any:
        x = operand(x)
        if not ir_dtypes.is_complex(x.dtype):
            raise TypeError(f"{name} does not accept dtype {x.dtype}. Accepted dtypes are subtypes of "
                            "complexfloating.")
        return bind(name, x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


real = _complex_part("real", "Elementwise real part of a complex array, in its parts' float type.")
imag = _complex_part("imag", "Elementwise imaginary part of a complex array, in its parts' float type.")


def conj(x: Any) -> Any:
    """Elementwise complex conjugate; a real operand becomes complex first (as jax.lax.conj)."""
    x = operand(x)
    if not ir_dtypes.is_complex(x.dtype):
        return convert_element_type(x, ir_dtypes.complex_dtype(x.dtype), weak_type=x.weak_type)
    return bind("conj", x)


def bitcast_convert_type(x: Any, new_dtype: Any) -> Any:
    """Reinterpret the bits of ``x`` as ``new_dtype``; a narrower type adds a minor dimension,
    a wider one consumes it."""
    return bind("bitcast_convert", operand(x), new_dtype=_new_dtype(new_dtype, "bitcast_convert_type"))


def _new_dtype(new_dtype: Any, name: str) -> np.dtype:
    try:
        return front_dtypes.canonicalize(np.dtype(new_dtype))
    except TypeError as err:
        raise user_error(TypeError, str(err), f"new_dtype of mlax.lax.{name}") from None


__all__ = [
    "RoundingMethod", "abs", "add", "atan2", "bitcast_convert_type", "bitwise_and", "bitwise_not",
    "bitwise_or", "bitwise_xor", "cbrt", "ceil", "clamp", "complex", "conj", "convert_element_type",
    "cos", "div", "eq", "erf", "erf_inv", "erfc", "exp", "exp2", "expm1", "floor", "ge", "gt", "imag",
    "integer_pow", "is_finite", "le", "log", "log1p", "logistic", "lt", "max", "min", "mul", "ne", "neg",
    "nextafter", "population_count", "pow", "real", "reciprocal", "rem", "round", "rsqrt", "select",
    "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "sign", "sin", "sqrt", "square", "sub", "tan",
    "tanh",
]
