"""Elementwise ops: unary and binary math on operands of one shape and dtype.

Semantics follow StableHLO and JAX on XLA's CPU: integer division truncates, x/0 is -1
(signed) or all ones (unsigned) and x%0 is x; shifts by the bit width or more (or by a
negative amount) give 0, or the sign fill for arithmetic shifts; max/min propagate NaN and
order -0 below +0; round rounds half away from zero unless told otherwise. Half floats
(f16, bf16) compute in f32 and round back, as XLA's CPU does. One known difference: XLA's
CPU flushes subnormal floats to zero and the reference does not.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from mlax.dialect import dtypes
from mlax.dialect.erf_inv import erf_inv_reference
from mlax.dialect.ops.common import (
    any_rank,
    compute_dtype,
    op_value_error,
    require_dtype,
    require_same_types,
)
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec

DtypeCheck = tuple[Callable[[np.dtype], bool], str]
FLOAT: DtypeCheck = (dtypes.is_float, "floating-point")
INEXACT: DtypeCheck = (dtypes.is_inexact, "floating-point or complex")
NUMERIC: DtypeCheck = (lambda d: not dtypes.is_bool(d), "numeric")
SIGNED: DtypeCheck = (lambda d: dtypes.is_inexact(d) or dtypes.is_signed_int(d), "signed numeric")
INTEGER: DtypeCheck = (dtypes.is_int, "integer")
INT_OR_BOOL: DtypeCheck = (lambda d: dtypes.is_int(d) or dtypes.is_bool(d), "integer or boolean")
ANY: DtypeCheck = (lambda d: True, "any")

ROUNDING_METHODS = ("away_from_zero", "to_nearest_even")


def run_elementwise(fn: Callable[..., np.ndarray], *xs: np.ndarray, **attrs: object) -> np.ndarray:
    """Apply ``fn`` in the compute dtype of ``xs[0]`` and round back, with NumPy's warnings silenced."""
    out_dtype = np.asarray(xs[0]).dtype
    work = compute_dtype(out_dtype)
    with np.errstate(all="ignore"):
        result = fn(*(np.asarray(x).astype(work, copy=False) for x in xs), **attrs)
    return np.asarray(result).astype(out_dtype, copy=False)


def _define(name: str, operands: tuple[str, ...], fn: Callable[..., np.ndarray], check: DtypeCheck,
            summary: str, description: str, *, choices: dict[str, tuple[str, ...]] | None = None,
            result_dtype: np.dtype | Callable[[np.dtype], np.dtype] | None = None,
            native: bool = False, **traits: object) -> None:
    """An elementwise op whose operands share type T; the result is T too unless ``result_dtype``
    is given (a dtype, or a function of the operand dtype).

    ``choices`` declares string attributes and their allowed values. ``native`` ops get their
    operands in their own dtype (they round intermediate steps themselves); the others run in
    the compute dtype through `run_elementwise`. ``traits`` are the op's other traits
    (`define_op`: stablehlo, zero_derivative, linear, complex); every op here is elementwise.
    """
    choices = choices or {}

    def infer(*specs: TensorSpec, **attrs: str) -> TensorSpec:
        require_same_types(name, specs, operands)
        require_dtype(name, specs[0], *check, operand=operands[0])
        for attr, allowed in choices.items():
            if attrs[attr] not in allowed:
                raise op_value_error(name, f"{attr} must be one of {list(allowed)}, got {attrs[attr]!r}")
        if result_dtype is None:
            return specs[0]
        dtype = result_dtype(specs[0].dtype) if callable(result_dtype) else result_dtype
        return TensorSpec(specs[0].shape, dtype)

    @any_rank
    def reference(*xs: np.ndarray, **attrs: str) -> np.ndarray:
        if native:
            with np.errstate(all="ignore"):
                return fn(*xs, **attrs)
        return run_elementwise(fn, *xs, **attrs)

    ports = ", ".join(f"{o}: T" for o in operands)
    define_op(name, f"({ports}) -> (result: {'T' if result_dtype is None else 'U'})",
              infer=infer, reference=reference, attributes={a: "str" for a in choices},
              summary=summary, description=description, elementwise=True, **traits)


def define_unary(name: str, fn: Callable[..., np.ndarray], check: DtypeCheck, summary: str,
                 description: str = "", **options: object) -> None:
    """An op ``(operand: T) -> (result: T)`` computed by ``fn`` (options as `_define`)."""
    _define(name, ("operand",), fn, check, summary, description, **options)


def define_binary(name: str, fn: Callable[..., np.ndarray], check: DtypeCheck, summary: str,
                  description: str = "", **options: object) -> None:
    """An op ``(lhs: T, rhs: T) -> (result: T)`` computed by ``fn`` (options as `_define`)."""
    _define(name, ("lhs", "rhs"), fn, check, summary, description, **options)


# --- reference helpers ---------------------------------------------------------------------

def _all_ones(dtype: np.dtype) -> np.ndarray:
    return np.invert(np.zeros((), dtype))


def _sign(x: np.ndarray) -> np.ndarray:
    if dtypes.is_float(x.dtype):
        return np.where((x == 0) | np.isnan(x), x, np.sign(x))
    return np.sign(x)


def _abs(x: np.ndarray) -> np.ndarray:
    """|x|; a complex operand gives its parts' type, the others their own."""
    return np.abs(x) if dtypes.is_complex(x.dtype) else run_elementwise(np.abs, x)


_MATH_ERFC = np.frompyfunc(math.erfc, 1, 1)


def _erf(x: np.ndarray) -> np.ndarray:
    """SciPy's erf (scipy.special is imported on first use: it takes longer to import than the
    rest of the dialect)."""
    import scipy.special

    return scipy.special.erf(x)


def _erfc(x: np.ndarray) -> np.ndarray:
    """SciPy's erfc (computed in f64, then rounded), except in f64, where C's erfc keeps the
    subnormal results SciPy flushes to zero (26.55 < x < 27.23)."""
    if x.dtype == np.float64:
        return np.asarray(_MATH_ERFC(x), np.float64)
    import scipy.special

    return scipy.special.erfc(x)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    magnitude = np.abs(x)
    whole = np.trunc(magnitude)
    return np.copysign(whole + (magnitude - whole >= 0.5), x)


_ROUNDING = {"away_from_zero": _round_half_away, "to_nearest_even": np.rint}


def _exp2(x: np.ndarray) -> np.ndarray:
    """exp(ln2 * x) with ln2 and the product rounded to x's type: how JAX lowers exp2."""
    return run_elementwise(np.exp, run_elementwise(np.multiply, np.full_like(x, np.log(2)), x))


def _logistic(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)), each step rounded to x's type: how JAX lowers logistic. For complex x
    an infinite exp(-x) gives 0, as XLA's complex division by an infinity does (NumPy's gives NaN)."""
    one = np.ones_like(x)
    steps = run_elementwise(np.exp, run_elementwise(np.negative, x))
    out = run_elementwise(np.divide, one, run_elementwise(np.add, one, steps))
    if dtypes.is_complex(x.dtype):
        out = np.where(np.isinf(steps.real) | np.isinf(steps.imag), np.zeros_like(out), out)
    return out


def _population_count(x: np.ndarray) -> np.ndarray:
    bits = x.view(np.dtype(f"u{x.dtype.itemsize}"))  # count the two's-complement bits
    return np.bitwise_count(bits).astype(x.dtype)


def _int_div_rem(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Truncating quotient and remainder with XLA's answers for y == 0 and INT_MIN / -1."""
    zero = y == 0
    minus_one = (y == -1) if dtypes.is_signed_int(x.dtype) else np.zeros_like(zero)
    safe = np.where(zero | minus_one, np.ones_like(y), y)
    rem = np.fmod(x, safe)
    quotient = (x - rem) // safe  # exact: x - rem is a multiple of safe
    quotient = np.where(minus_one, np.negative(x), quotient)  # wraps INT_MIN / -1 to INT_MIN
    return np.where(zero, _all_ones(x.dtype), quotient), np.where(zero, x, rem)


def _div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _int_div_rem(x, y)[0] if dtypes.is_int(x.dtype) else np.divide(x, y)


def _log1p(x: np.ndarray) -> np.ndarray:
    """log1p; for complex a + ib the real part is 0.5 log1p(a (2 + a) + b b) where that sum is
    within 1/2 of 0 (NumPy's log(1 + x) loses tiny x) and log |1 + x| elsewhere (no overflow,
    exact near -1); the imaginary part is atan2(b, 1 + a)."""
    if not dtypes.is_complex(x.dtype):
        return np.log1p(x)
    a, b = x.real, x.imag
    twice, squares = a * (2 + a), b * b
    near = np.abs(twice + squares) < 0.5
    real = np.where(near, 0.5 * np.log1p(twice + squares), np.log(np.abs(np.asarray(x + 1, x.dtype))))
    out = np.empty_like(x)
    out.real, out.imag = real, np.arctan2(b, a + 1)
    return out


def _rem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _int_div_rem(x, y)[1] if dtypes.is_int(x.dtype) else np.fmod(x, y)


def _int_pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Wrapping square-and-multiply; a negative exponent gives 0 unless the base is 1 or -1."""
    negative = y < 0
    exponent = np.where(negative, np.zeros_like(y), y)
    acc, base = np.ones_like(x), x.copy()
    while np.any(exponent):
        acc = np.where(exponent & 1, acc * base, acc)
        base = base * base
        exponent = exponent >> 1
    if not np.any(negative):
        return acc
    one = np.ones_like(x)
    unit = np.where(x == 1, one, np.where(x == -1, np.where(y & 1, -one, one), np.zeros_like(x)))
    return np.where(negative, unit, acc)


def _pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _int_pow(x, y) if dtypes.is_int(x.dtype) else np.power(x, y)


def _lexicographic(x: np.ndarray, y: np.ndarray, wins: np.ufunc) -> np.ndarray:
    """JAX's complex max/min: x where ``wins`` holds of the real parts, or of the imaginary parts
    when the real parts are equal; y otherwise (so NaNs pick y)."""
    pick = np.where(x.real == y.real, wins(x.imag, y.imag), wins(x.real, y.real))
    return np.where(pick, x, y)


def maximum(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """max with NaN propagation and -0 < +0 (StableHLO / XLA); complex: lexicographic (JAX)."""
    if dtypes.is_complex(x.dtype):
        return _lexicographic(x, y, np.greater)
    out = np.maximum(x, y)
    if dtypes.is_float(x.dtype):
        out = np.where(x == y, np.where(np.signbit(x), y, x), out)
    return out


def minimum(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """min with NaN propagation and -0 < +0 (StableHLO / XLA); complex: lexicographic (JAX)."""
    if dtypes.is_complex(x.dtype):
        return _lexicographic(x, y, np.less)
    out = np.minimum(x, y)
    if dtypes.is_float(x.dtype):
        out = np.where(x == y, np.where(np.signbit(x), x, y), out)
    return out


def _atan2(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """np.arctan2; complex operands take XLA's definition -i log((x + iy) / sqrt(x^2 + y^2)),
    each step rounded in the operands' type (jax lowers complex atan2 to it)."""
    if not dtypes.is_complex(y.dtype):
        return np.arctan2(y, x)
    return np.asarray(-1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y)), y.dtype)


def _nextafter(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.where(x == y, y, np.nextafter(x, y))  # NumPy's f16 loop returns x, not y, on ties


def _shift(kind: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A shift on the operands' bit patterns; amounts are read as unsigned, as XLA does."""

    def shift(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        bits = 8 * x.dtype.itemsize
        unsigned, signed = np.dtype(f"u{x.dtype.itemsize}"), np.dtype(f"i{x.dtype.itemsize}")
        amount = y.view(unsigned)
        out_of_range = amount >= bits
        if kind == "arithmetic":
            amount = np.where(out_of_range, np.asarray(bits - 1, unsigned), amount)
            return (x.view(signed) >> amount.astype(signed)).view(x.dtype)
        amount = np.where(out_of_range, np.zeros_like(amount), amount)
        moved = x.view(unsigned) << amount if kind == "left" else x.view(unsigned) >> amount
        return np.where(out_of_range, np.zeros_like(x), moved.view(x.dtype))

    return shift


# --- unary -----------------------------------------------------------------------------

define_unary("neg", np.negative, NUMERIC, "Negation, -x (wraps for the most negative integer and for "
             "unsigned integers).", stablehlo="stablehlo.negate", linear=(0,), complex=True)
define_unary("abs", _abs, SIGNED, "Absolute value |x|.",
             "Signed integers, floats and complex numbers. |INT_MIN| wraps to INT_MIN; abs(-0.0) is "
             "+0.0; NaN stays NaN. The absolute value of a complex number is the real hypot of its "
             "parts (complex64 -> f32).", result_dtype=dtypes.real_dtype, native=True,
             stablehlo="stablehlo.abs", complex=True)
define_unary("sign", _sign, NUMERIC, "Sign: -1, 0 or 1 in the operand's type.",
             "Floats: sign(+-0) is +-0 and sign(NaN) is NaN. Unsigned integers give 0 or 1 (JAX's "
             "`lax.sign` accepts them; StableHLO lowering is `select(x == 0, 0, 1)`). Complex: "
             "x / |x|, and 0 for 0.", stablehlo="stablehlo.sign", zero_derivative=True, complex=True)
define_unary("floor", np.floor, FLOAT, "Round toward -inf.",
             stablehlo="stablehlo.floor", zero_derivative=True)
define_unary("ceil", np.ceil, FLOAT, "Round toward +inf.", stablehlo="stablehlo.ceil", zero_derivative=True)
define_unary("round", lambda x, *, rounding_method: _ROUNDING[rounding_method](x), FLOAT,
             "Round to an integral value; ties as `rounding_method` says.",
             "`rounding_method` is `\"away_from_zero\"` (StableHLO `round_nearest_afz`; the "
             "default of `lax.round`) or `\"to_nearest_even\"` (`round_nearest_even`). The sign "
             "of zero is kept (round(-0.4) is -0.0); NaN and infinities pass through.",
             choices={"rounding_method": ROUNDING_METHODS}, zero_derivative=True)
define_unary("exp", np.exp, INEXACT, "Natural exponential e**x.",
             stablehlo="stablehlo.exponential", complex=True)
define_unary("exp2", _exp2, INEXACT, "Base-2 exponential 2**x.",
             "Defined as JAX lowers it: `exp(c * x)` where `c` is ln 2 rounded to the operand "
             "type and the product is rounded to the operand type before the exponential (so "
             "f16/bf16 results carry the error of the rounded product).", native=True, complex=True)
define_unary("expm1", np.expm1, INEXACT, "e**x - 1, accurate near 0.",
             stablehlo="stablehlo.exponential_minus_one", complex=True)
define_unary("log", np.log, INEXACT, "Natural logarithm (log 0 = -inf, log of a negative = NaN).",
             stablehlo="stablehlo.log", complex=True)
define_unary("log1p", _log1p, INEXACT, "log(1 + x), accurate near 0 (log1p(-1) = -inf).",
             stablehlo="stablehlo.log_plus_one", complex=True)
define_unary("sqrt", np.sqrt, INEXACT, "Square root (sqrt(-0.0) = -0.0, negative -> NaN).",
             stablehlo="stablehlo.sqrt", complex=True)
define_unary("rsqrt", lambda x: 1 / np.sqrt(x), INEXACT, "Reciprocal square root 1/sqrt(x).",
             "rsqrt(+-0) = +-inf, rsqrt(inf) = 0, negative -> NaN.",
             stablehlo="stablehlo.rsqrt", complex=True)
define_unary("cbrt", np.cbrt, FLOAT, "Cube root (defined for negative x).", stablehlo="stablehlo.cbrt")
define_unary("sin", np.sin, INEXACT, "Sine (radians).", stablehlo="stablehlo.sine", complex=True)
define_unary("cos", np.cos, INEXACT, "Cosine (radians).", stablehlo="stablehlo.cosine", complex=True)
define_unary("tan", np.tan, INEXACT, "Tangent (radians).", stablehlo="stablehlo.tan", complex=True)
define_unary("tanh", np.tanh, INEXACT, "Hyperbolic tangent.", stablehlo="stablehlo.tanh", complex=True)
define_unary("logistic", _logistic, INEXACT, "Logistic sigmoid 1 / (1 + e**-x).",
             "Defined as JAX lowers it: `1 / (1 + exp(-x))` with every step rounded to the "
             "operand type (so it reaches exactly 0 for large negative x).", native=True,
             stablehlo="stablehlo.logistic", complex=True)
define_unary("erf", _erf, FLOAT, "Error function.", stablehlo="chlo.erf")
define_unary("erfc", _erfc, FLOAT, "Complementary error function 1 - erf(x).",
             "Float operands only. Computed directly, not as `1 - erf(x)`, so large x keeps full "
             "relative precision instead of cancelling to 0: erfc(10 : f64) = 2.09e-45. "
             "erfc(-inf) = 2, erfc(+inf) = 0, erfc(+-0) = 1, NaN stays NaN; in f32 the result "
             "rounds to exactly 2 for x <= -3.9. f16/bf16/f32 round the f64 value once. In f64 "
             "the result is subnormal for 26.55 < x < 27.23 (C's erfc; SciPy flushes it). "
             "The reference keeps subnormal results (erfc(9.3 : f32) = 1.65e-39), which XLA's CPU "
             "flushes to zero. StableHLO has no erfc: it lowers to `chlo.erfc`, which XLA "
             "expands into a rational approximation.", stablehlo="chlo.erfc")
define_unary("erf_inv", erf_inv_reference, FLOAT, "Inverse error function.",
             "erf_inv(+-1) = +-inf, erf_inv(-0.0) = -0.0; outside [-1, 1] the result is NaN. "
             "Computed as XLA computes it (Giles' polynomials, dialect/erf_inv.py), so eager, "
             "compiled and JAX results agree to the last bits rather than to the exact value's "
             "rounding (XLA's f32 polynomial is up to ~90 ulp from the exact value in the tails).",
             stablehlo="chlo.erf_inv")
define_unary("is_finite", lambda x: np.isfinite(x.astype(compute_dtype(x.dtype))), FLOAT,
             "True where x is neither infinite nor NaN.",
             "The result is an `i1` tensor of the operand's shape.",
             result_dtype=np.dtype(np.bool_), native=True,
             stablehlo="stablehlo.is_finite", zero_derivative=True)
define_unary("not", np.invert, INT_OR_BOOL, "Bitwise not (logical not on booleans).",
             stablehlo="stablehlo.not", zero_derivative=True)
define_unary("population_count", _population_count, INTEGER,
             "Number of set bits of each element, in the operand's type.",
             "Counts the two's-complement bits, so population_count(-1 : i8) = 8.", native=True,
             stablehlo="stablehlo.popcnt", zero_derivative=True)

# --- binary ----------------------------------------------------------------------------

define_binary("add", np.add, ANY, "Addition x + y (logical or on booleans).",
              stablehlo="stablehlo.add", linear=(0, 1), complex=True)
define_binary("sub", np.subtract, NUMERIC, "Subtraction x - y.",
              stablehlo="stablehlo.subtract", linear=(0, 1), complex=True)
define_binary("mul", np.multiply, ANY, "Multiplication x * y (logical and on booleans).",
              stablehlo="stablehlo.multiply", complex=True)
define_binary("div", _div, NUMERIC, "Division x / y; integers truncate toward zero.",
              "Integers: x / 0 is -1 for signed and all ones for unsigned types; INT_MIN / -1 "
              "is INT_MIN. Floats follow IEEE (x / 0 = +-inf, 0 / 0 = NaN).",
              stablehlo="stablehlo.divide", complex=True)
define_binary("rem", _rem, NUMERIC, "Remainder with the sign of the dividend (C fmod).",
              "Integers: x % 0 is x and INT_MIN % -1 is 0. Floats: x % 0 and inf % y are NaN, "
              "x % inf is x.", stablehlo="stablehlo.remainder")
define_binary("pow", _pow, NUMERIC, "Power x ** y (float ** float or int ** int).",
              "Floats follow C pow (pow(x, 0) = 1 even for NaN x, pow(1, y) = 1, negative x to a "
              "non-integer power is NaN). Integers multiply with wrap-around; a negative exponent "
              "gives 1 for base 1, +-1 for base -1 (by parity) and 0 otherwise, as XLA. "
              "`lax.pow(float, int)` converts the exponent to the base's type first.",
              stablehlo="stablehlo.power", complex=True)
define_binary("max", maximum, ANY, "Elementwise maximum (logical or on booleans).",
              "NaN in either operand gives NaN; max(-0.0, +0.0) is +0.0.",
              stablehlo="stablehlo.maximum", complex=True)
define_binary("min", minimum, ANY, "Elementwise minimum (logical and on booleans).",
              "NaN in either operand gives NaN; min(-0.0, +0.0) is -0.0.",
              stablehlo="stablehlo.minimum", complex=True)
define_binary("atan2", _atan2, INEXACT, "Four-quadrant arctangent of lhs / rhs (y, x order).",
              "Signed zeros select the quadrant: atan2(+-0, -0) = +-pi, atan2(+-0, +0) = +-0. "
              "Complex operands: -i log((rhs + i lhs) / sqrt(rhs^2 + lhs^2)), XLA's definition.",
              stablehlo="stablehlo.atan2", complex=True)
define_binary("and", np.bitwise_and, INT_OR_BOOL, "Bitwise and (logical and on booleans).",
              stablehlo="stablehlo.and", zero_derivative=True)
define_binary("or", np.bitwise_or, INT_OR_BOOL, "Bitwise or (logical or on booleans).",
              stablehlo="stablehlo.or", zero_derivative=True)
define_binary("xor", np.bitwise_xor, INT_OR_BOOL, "Bitwise xor (logical xor on booleans).",
              stablehlo="stablehlo.xor", zero_derivative=True)
define_binary("shift_left", _shift("left"), INTEGER, "Shift the bits of lhs left by rhs.",
              "The amount is read as unsigned: an amount >= the bit width (or negative) gives 0.",
              native=True, stablehlo="stablehlo.shift_left", zero_derivative=True)
define_binary("shift_right_logical", _shift("logical"), INTEGER,
              "Shift the bits of lhs right by rhs, filling with zeros.",
              "The amount is read as unsigned: an amount >= the bit width (or negative) gives 0. "
              "Signed operands shift their two's-complement bits.", native=True,
              stablehlo="stablehlo.shift_right_logical", zero_derivative=True)
define_binary("shift_right_arithmetic", _shift("arithmetic"), INTEGER,
              "Shift the bits of lhs right by rhs, filling with the sign bit.",
              "The amount is read as unsigned: an amount >= the bit width (or negative) gives "
              "the sign fill (0 or -1). Unsigned operands are shifted as their signed bit "
              "pattern (255 : ui8 >> 1 = 255).", native=True,
              stablehlo="stablehlo.shift_right_arithmetic", zero_derivative=True)
define_binary("nextafter", _nextafter, FLOAT,
              "The next representable value after lhs in the direction of rhs.",
              "Computed in the operand's own type (f16/bf16 step by their own ulp). NaN in either "
              "operand gives NaN; lhs == rhs gives rhs (nextafter(-0.0, +0.0) = +0.0); steps "
              "from zero reach the smallest subnormal.", native=True,
              stablehlo="chlo.next_after", zero_derivative=True)
