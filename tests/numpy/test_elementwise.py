"""mlax.numpy elementwise functions against jax.numpy: values (eager and jitted), dtypes,
weak types, promotion tables, Python-semantics integer division and error messages.

Dtype and weak-type rules are checked on every dtype through ``jax.eval_shape`` (no XLA
compile); values are checked on float32 with NaN/inf/-0.0 sprinkled in and on one more
dtype per function, to keep the run fast.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax import lax as mlax_lax
from tests.numpy.helpers import (
    BF16,
    DTYPES,
    SPECIALS,
    check_abstract,
    check_both,
    check_values,
    is_python,
    operand,
    random_shape,
)
from tests.oracle import assert_same, check_against_jax

# Shapes tests draw from: rank 0..3, with size-0 and size-1 dimensions.
# --- unary functions ----------------------------------------------------------------------

# mlax.numpy names checked against the jnp function of the same name (fix: jnp.trunc; jnp
# removed fix in 0.10).
UNARY: dict[str, Callable[..., Any]] = {name: getattr(jnp, name, jnp.trunc) for name in (
    "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt", "sin", "cos", "tan", "tanh",
    "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "fabs", "negative",
    "positive", "sign", "absolute", "floor", "ceil", "trunc", "fix", "rint", "round", "square",
    "reciprocal", "bitwise_not", "invert", "bitwise_invert", "logical_not", "isfinite", "isinf", "isnan",
    "isposinf", "isneginf", "signbit", "deg2rad", "rad2deg", "degrees", "radians", "sinc", "real", "imag",
    "conj", "conjugate", "nan_to_num", "modf", "bitwise_count", "isreal", "iscomplex")}
# Functions that see integers as integers get an integer dtype as their second value test;
# of the others, HALF_PRECISION also get float16 or bfloat16 values (they compute in float32).
INTEGER_MINDED = {"negative", "positive", "sign", "absolute", "floor", "ceil", "trunc", "fix", "rint",
                  "round", "square", "bitwise_not", "invert", "bitwise_invert", "logical_not", "isfinite",
                  "isinf", "isnan", "signbit", "real", "imag", "conj", "conjugate", "nan_to_num",
                  "reciprocal", "bitwise_count"}
HALF_PRECISION = {"exp", "log", "log2", "log10", "sqrt", "sin", "tanh", "sinc", "deg2rad", "expm1", "cbrt",
                  "arcsin", "arctanh", "cosh"}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_dtype_rules(name: str, rng: np.random.Generator) -> None:
    for dtype in DTYPES:
        check_abstract(getattr(mnp, name), UNARY[name], operand(rng, dtype))


# Values on float32 for every function; a second dtype only for INTEGER_MINDED and
# HALF_PRECISION: for the others it is left out (the float32 values and the dtype rules cover it).
UNARY_VALUE_CASES = [(name, kind) for kind in ("float32", "other") for name in sorted(UNARY)
                     if kind == "float32" or name in INTEGER_MINDED | HALF_PRECISION]


@pytest.mark.parametrize("name,kind", UNARY_VALUE_CASES)
def test_unary_values(name: str, kind: str, rng: np.random.Generator) -> None:
    if kind == "float32":
        dtype = np.dtype(np.float32)
    else:
        dtype = np.dtype(np.int8 if name in INTEGER_MINDED else (np.float16, BF16)[len(name) % 2])
    check_values(getattr(mnp, name), UNARY[name], operand(rng, dtype))


# --- binary functions ---------------------------------------------------------------------

BINARY: dict[str, Callable[..., Any]] = {
    name: getattr(jnp, name) for name in (
        "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod",
        "fmod", "divmod", "power", "float_power", "arctan2", "hypot", "logaddexp", "logaddexp2",
        "copysign", "nextafter", "maximum", "minimum", "fmax", "fmin", "heaviside", "equal",
        "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
        "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
        "bitwise_left_shift", "bitwise_right_shift", "isclose")
}
PAIRS = list(itertools.product(DTYPES, repeat=2))
# Functions whose integer inputs are just promoted to float (covered by the dtype rules).
FLOAT_ONLY = {"divide", "true_divide", "float_power", "arctan2", "hypot", "logaddexp", "logaddexp2",
              "copysign", "nextafter", "heaviside", "isclose"}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_dtype_rules(name: str, rng: np.random.Generator) -> None:
    """A random sample of dtype pairs (Python scalars included) per function."""
    for i in rng.choice(len(PAIRS), size=10, replace=False):
        a, b = PAIRS[i]
        if is_python(a) and is_python(b):
            continue  # both Python scalars: see test_comparison_of_weak_scalars
        shape = random_shape(rng)
        check_abstract(getattr(mnp, name), BINARY[name], operand(rng, a, shape), operand(rng, b, shape))


def _broadcasting_pair(rng: np.random.Generator, dtype: Any) -> tuple[Any, Any]:
    shape = random_shape(rng)
    other = tuple(1 if rng.random() < 0.5 else d for d in shape)[int(rng.integers(0, len(shape) + 1)):]
    return operand(rng, dtype, shape), operand(rng, dtype, other)


# int32 values are left out for FLOAT_ONLY: their integer inputs only promote to float (see
# test_binary_dtype_rules).
BINARY_VALUE_CASES = [pytest.param(name, dtype, id=f"{tag}-{name}")
                      for dtype, tag in ((np.float32, "f32"), (np.int32, "i32")) for name in sorted(BINARY)
                      if not (dtype == np.int32 and name in FLOAT_ONLY)]


@pytest.mark.parametrize("name,dtype", BINARY_VALUE_CASES)
def test_binary_values(name: str, dtype: Any, rng: np.random.Generator) -> None:
    x, y = _broadcasting_pair(rng, dtype)
    if np.dtype(dtype).kind == "i":
        y = np.where(rng.random(y.shape) < 0.2, 0, y).astype(dtype)  # division by zero included
        if name.endswith(("left_shift", "right_shift")):
            y = rng.integers(0, 40, size=y.shape).astype(dtype)  # past the bit width too
        if name == "power":
            y = rng.integers(-2, 9, size=y.shape).astype(dtype)
    check_values(getattr(mnp, name), BINARY[name], x, y)


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "fmod", "divmod"])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8, np.uint32, np.float32])
def test_division_edge_cases(name: str, dtype: Any) -> None:
    """Every sign combination with zero divisors and (for signed ints) the most negative value."""
    dtype = np.dtype(dtype)
    if dtype.kind == "u":
        values = [0, 1, 2, 7, np.iinfo(dtype).max]
    elif dtype.kind == "i":
        values = [0, 1, -1, 7, -7, 3, -3, np.iinfo(dtype).min, np.iinfo(dtype).max]
    else:
        values = [0.0, -0.0, 1.0, -1.0, 7.5, -7.5, 3.0, -3.0, np.inf, -np.inf, np.nan]
    grid = np.array(list(itertools.product(values, repeat=2)), dtype=np.float64)
    x, y = (grid[:, k].astype(dtype) for k in (0, 1))
    check_values(getattr(mnp, name), BINARY[name], x, y)


def test_power_special_cases(rng: np.random.Generator) -> None:
    x = operand(rng, np.float32, (3, 4))
    i = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    for exponent in (0, 2, 3, -2, 0.5):
        check_values(lambda a, e=exponent: mnp.power(a, e), lambda a, e=exponent: jnp.power(a, e), x)
    for exponent in (0, 3, 12):
        check_values(lambda a, e=exponent: mnp.power(a, e), lambda a, e=exponent: jnp.power(a, e), i)
    check_values(mnp.power, jnp.power, x.astype(np.float16), i)  # float base, int exponent
    check_values(mnp.power, jnp.power, np.array([True, False]), np.array([True, True]))
    with pytest.raises(TypeError, match="negative powers"):
        mnp.power(i, -1)


def test_promotion_table_add(x64: bool) -> None:
    """mnp.add's result dtype and weak type for every pair of dtypes, Python scalars included."""
    rng = np.random.default_rng(0)
    for a, b in PAIRS:
        check_abstract(mnp.add, jnp.add, operand(rng, a, (2,)), operand(rng, b, (2,)))


def test_promotion_table_add_traced() -> None:
    """The same promotions under mlax.jit, where Python scalars are weakly typed arguments."""
    rng = np.random.default_rng(1)
    for a, b in [(np.float16, float), (np.int8, int), (np.uint8, int), (BF16, np.float16),
                 (np.int8, np.uint8), (np.bool_, int), (int, float), (np.int32, float)]:
        x, y = operand(rng, a, ()), operand(rng, b, ())
        assert_same(mlax.jit(mnp.add)(x, y), jax.jit(jnp.add)(x, y))


def test_comparison_of_weak_scalars() -> None:
    """Comparing weak values gives a weak boolean, as in JAX."""
    assert mnp.less(1, 2.5).weak_type == jnp.less(1, 2.5).weak_type
    assert mnp.isnan(2.0).weak_type == jnp.isnan(2.0).weak_type


def test_aliases() -> None:
    assert mnp.mod is mnp.remainder and mnp.divide is mnp.true_divide and mnp.abs is mnp.absolute
    assert mnp.pow is mnp.power and mnp.around is mnp.round
    assert mnp.invert is mnp.bitwise_not and mnp.conj is mnp.conjugate
    assert mnp.bitwise_invert is mnp.bitwise_not
    assert mnp.bitwise_left_shift is mnp.left_shift and mnp.bitwise_right_shift is mnp.right_shift
    for short in ("asin", "acos", "atan", "asinh", "acosh", "atanh"):
        assert getattr(mnp, short) is getattr(mnp, "arc" + short[1:])


INVERSE_TRIG = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "sinh": "sinh", "cosh": "cosh",
                "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh"}


@pytest.mark.parametrize("name", sorted(INVERSE_TRIG))
def test_inverse_trig_is_lax_after_promotion(name: str) -> None:
    """One implementation: the jnp function traces to exactly its mlax.lax composite."""
    lax_fn = getattr(mlax_lax, INVERSE_TRIG[name])

    def ir(f: Callable[..., Any], arg: Any) -> str:
        return re.sub(r"func\.func @\w+", "func.func @f", mlax.make_mlir(f)(arg))

    for arg in (np.ones((2, 3), np.float16), np.float32(0.5)):
        assert ir(getattr(mnp, name), arg) == ir(lax_fn, arg)
    ints = np.arange(3, dtype=np.int8)
    promoted = ir(lambda i: lax_fn(mlax_lax.convert_element_type(i, np.float32)), ints)
    assert ir(getattr(mnp, name), ints) == promoted


@pytest.mark.parametrize("name", sorted(INVERSE_TRIG))
def test_inverse_trig_tails(name: str, rng: np.random.Generator) -> None:
    """Magnitudes from 1e-30 to the float32 maximum, and values next to +-1."""
    magnitudes = 10.0 ** rng.uniform(-30, 38.5, size=40)
    near_one = 1 + np.array([-1e-3, -3e-7, -6e-8, 0.0, 1.2e-7, 2e-6, 1e-3])
    x = np.concatenate([magnitudes, -magnitudes, near_one, -near_one, SPECIALS]).astype(np.float32)
    check_values(getattr(mnp, name), UNARY[name], x)


# --- composite functions with options ---------------------------------------------------------

@pytest.mark.parametrize("decimals", [0, 1, 2, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_round_half_to_even(decimals: int, dtype: Any, rng: np.random.Generator) -> None:
    halves = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 125.0, -35.0, 0.25, 0.35, np.nan])
    x = np.concatenate([halves, rng.uniform(-300, 300, 6)])
    if np.dtype(dtype).kind == "i" and decimals < 0:
        with pytest.raises(NotImplementedError):
            mnp.round(np.nan_to_num(x).astype(dtype), decimals)
        return
    x = (np.nan_to_num(x) if np.dtype(dtype).kind == "i" else x).astype(dtype)
    check_values(lambda a: mnp.round(a, decimals), lambda a: jnp.round(a, decimals), x)


def test_where(rng: np.random.Generator) -> None:
    cond = rng.random((2, 3)) < 0.5
    x = operand(rng, np.float32, (2, 3))
    check_values(mnp.where, jnp.where, cond, x, 0)
    check_values(mnp.where, jnp.where, cond.astype(np.int32), operand(rng, np.int8, (3,)), 2.5)
    check_values(mnp.where, jnp.where, True, 1, 2)
    check_values(mnp.where, jnp.where, operand(rng, np.float32, (1, 3)), np.int8(3), np.uint8(4))
    for kw in ({"size": 5, "fill_value": -1}, {"size": 2}):  # the one-argument form is nonzero
        check_values(lambda c, kw=kw: mnp.where(c, **kw), lambda c, kw=kw: jnp.where(c, **kw), cond)
    for ours, expected in zip(mnp.where(cond), np.nonzero(cond), strict=True):  # eager: no size needed
        np.testing.assert_array_equal(np.asarray(ours), expected)
    with pytest.raises(ValueError, match="both or neither"):
        mnp.where(cond, x)
    with pytest.raises(ValueError, match="where"):
        mnp.where(cond, np.ones(4), 0)


def test_select_and_array_equality(rng: np.random.Generator) -> None:
    x = operand(rng, np.float32, (3, 4))
    conds = [x > 0, (x < -1).astype(np.int32), np.isnan(x)]
    choices = [x, np.int8(2), operand(rng, np.int32, (4,))]
    check_both(lambda m: lambda c0, c1, c2, a: m.select([c0, c1, c2], [a, choices[1], choices[2]], -1.5),
               *conds, x)
    check_both(lambda m: lambda c: m.select([c], [3]), conds[0])
    for a, b in ((x, x), (x, x[:2]), (x, np.where(np.isnan(x), np.nan, x)), (x[:1], x)):
        check_both(lambda m: lambda p, q: (m.array_equal(p, q), m.array_equal(p, q, equal_nan=True)), a, b)
    check_both(lambda m: lambda p: m.array_equiv(p, p[:1]), x)
    with pytest.raises(ValueError, match="select: condlist must have length"):
        mnp.select([x > 0], [x, x])


def test_clip(rng: np.random.Generator) -> None:
    x = operand(rng, np.float32, (3, 4))
    i = operand(rng, np.int8, (3, 4))
    check_values(lambda a: mnp.clip(a, -1, 1.5), lambda a: jnp.clip(a, -1, 1.5), x)
    check_values(lambda a: mnp.clip(a, max=3), lambda a: jnp.clip(a, max=3), i)
    check_values(lambda a: mnp.clip(a, 2.5, 7), lambda a: jnp.clip(a, 2.5, 7), i)
    check_values(lambda a, lo: mnp.clip(a, lo), lambda a, lo: jnp.clip(a, lo), x, x[:1])
    with pytest.raises(ValueError, match="clip"):
        mnp.clip()


def test_isclose_allclose(rng: np.random.Generator) -> None:
    a = operand(rng, np.float32, (4, 3))
    b = (a + rng.normal(0, 1e-5, a.shape)).astype(np.float32)
    for kw in ({"equal_nan": True}, {"rtol": 1e-3, "atol": 0.0}):
        check_values(lambda x, y, kw=kw: mnp.isclose(x, y, **kw), lambda x, y, kw=kw: jnp.isclose(x, y, **kw),
                     a, b)
        check_values(lambda x, y, kw=kw: mnp.allclose(x, y, **kw),
                     lambda x, y, kw=kw: jnp.allclose(x, y, **kw), a, b)
    check_values(mnp.isclose, jnp.isclose, np.arange(4), np.array([0, 1, 3, 3]))


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_isclose_allclose_complex(rng: np.random.Generator) -> None:
    """jax's semantics on complex arrays: the modulus of the difference against real tolerances
    (a complex tolerance loses its imaginary part), infinities close only when equal, a NaN in
    either part never close unless ``equal_nan``; mixed with real and integer operands."""
    shape = (4, 3)
    a = (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(np.complex64)
    b = (a + rng.normal(0, 1e-5, shape) + 1j * rng.normal(0, 1e-5, shape)).astype(np.complex64)
    b[0, 0] += np.complex64(3e-3j)
    inf, nan = np.inf, np.nan
    special = np.array([complex(inf, 0), complex(nan, 1), complex(1, inf), complex(inf, inf),
                        complex(-inf, 0), complex(nan, nan), 1 + 1j, 0j], np.complex64)
    for kw in ({}, {"equal_nan": True}, {"rtol": 1e-3, "atol": 0.0}, {"atol": 1e-2}, {"rtol": 1e-3 + 5j}):
        for x, y in ((a, b), (special, special), (special, special[::-1]), (a, a.real), (a[0], 1)):
            check_values(lambda x, y, kw=kw: mnp.isclose(x, y, **kw),
                         lambda x, y, kw=kw: jnp.isclose(x, y, **kw), x, y)
            check_values(lambda x, y, kw=kw: mnp.allclose(x, y, **kw),
                         lambda x, y, kw=kw: jnp.allclose(x, y, **kw), x, y)


def test_nan_to_num_options(rng: np.random.Generator) -> None:
    x = operand(rng, np.float32, (3, 5))
    check_values(lambda a: mnp.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0),
                 lambda a: jnp.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0), x)
    check_values(mnp.nan_to_num, jnp.nan_to_num, x.astype(np.float16))


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype float64")
@pytest.mark.parametrize("target", [np.float32, np.int8, np.uint8, np.bool_, BF16, np.float64, None])
def test_astype(target: Any, rng: np.random.Generator) -> None:
    x = operand(rng, np.float32, (2, 5))
    check_values(lambda a: mnp.astype(a, target), lambda a: jnp.astype(a, target), np.nan_to_num(x))
    check_values(lambda a: mnp.astype(a, target), lambda a: jnp.astype(a, target), 2.5)
    check_values(lambda a: mnp.asarray(a).astype(target), lambda a: jnp.asarray(a).astype(target),
                 np.arange(-3, 3))


def test_operators_use_jnp_semantics(rng: np.random.Generator) -> None:
    x, y = operand(rng, np.int32, (3, 4)), operand(rng, np.int32, (4,))
    y = np.where(y == 0, 3, y).astype(np.int32)
    ops = [lambda a, b: a // b, lambda a, b: a % b, lambda a, b: a / b, lambda a, b: divmod(a, b),
           lambda a, b: -abs(a), lambda a, b: ~a >> 2, lambda a, b: a < b, lambda a, b: (a & b) | (a ^ b)]
    for op in ops:
        check_against_jax(lambda a, b, op=op: op(mnp.asarray(a), b),
                          lambda a, b, op=op: op(jnp.asarray(a), b), x, y)


# --- errors -------------------------------------------------------------------------------------

def test_errors_name_the_function() -> None:
    with pytest.raises(ValueError, match="add: shapes .* incompatible"):
        mnp.add(np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match="floor_divide"):
        mnp.floor_divide(np.ones((2, 3)), np.ones((4, 1, 2)))
    with pytest.raises(TypeError, match="multiply requires ndarray or scalar"):
        mnp.multiply([1, 2], 3)
    with pytest.raises(TypeError, match="neg"):
        mnp.negative(np.array([True]))
    with pytest.raises(TypeError, match="sub"):
        mnp.subtract(True, False)
    with pytest.raises(TypeError, match="decimals"):
        mlax.jit(lambda x, d: mnp.round(x, d))(1.5, 2)
