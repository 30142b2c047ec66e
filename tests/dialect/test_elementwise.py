"""Elementwise ops and their mlax.lax wrappers, checked against jax.lax eagerly and under jit."""

from __future__ import annotations

import itertools
from typing import Any

import jax
import numpy as np
import pytest

import mlax
from mlax import lax
from mlax.core import bind
from mlax.dialect import OPS
from tests.oracle import (
    FIXED_SHAPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    Case,
    assert_same,
    check_against_jax,
    check_cases,
    random_array,
    random_shape,
)

SIGNED_INTS = (np.int8, np.int16, np.int32)
BOOL = (np.bool_,)
NUMERIC = FLOAT_DTYPES + INT_DTYPES

# lax name -> (dtypes it accepts, (low, high) of the random float inputs).
UNARY = {
    "neg": (NUMERIC, None), "abs": (FLOAT_DTYPES + SIGNED_INTS, None), "sign": (NUMERIC, None),
    "floor": (FLOAT_DTYPES, None), "ceil": (FLOAT_DTYPES, None), "round": (FLOAT_DTYPES, None),
    "exp": (FLOAT_DTYPES, None), "exp2": (FLOAT_DTYPES, (-8.0, 8.0)), "expm1": (FLOAT_DTYPES, None),
    "log": (FLOAT_DTYPES, (0.01, 5.0)), "log1p": (FLOAT_DTYPES, (-0.9, 5.0)),
    "sqrt": (FLOAT_DTYPES, (0.0, 5.0)), "rsqrt": (FLOAT_DTYPES, (0.01, 5.0)),
    "cbrt": (FLOAT_DTYPES, (-30.0, 30.0)), "sin": (FLOAT_DTYPES, None), "cos": (FLOAT_DTYPES, None),
    "tan": (FLOAT_DTYPES, (-1.5, 1.5)), "tanh": (FLOAT_DTYPES, None),
    "logistic": (FLOAT_DTYPES, (-12.0, 12.0)), "erf": (FLOAT_DTYPES, None),
    "erfc": (FLOAT_DTYPES, (-6.0, 9.0)), "erf_inv": (FLOAT_DTYPES, (-0.99, 0.99)),
    "is_finite": (FLOAT_DTYPES, None),
    "bitwise_not": (INT_DTYPES + BOOL, None), "population_count": (INT_DTYPES, None),
}
BINARY = {
    "add": NUMERIC, "sub": NUMERIC, "mul": NUMERIC, "div": NUMERIC, "rem": NUMERIC,
    "pow": FLOAT_DTYPES, "max": NUMERIC + BOOL, "min": NUMERIC + BOOL, "atan2": FLOAT_DTYPES,
    "bitwise_and": INT_DTYPES + BOOL, "bitwise_or": INT_DTYPES + BOOL, "bitwise_xor": INT_DTYPES + BOOL,
    "shift_left": INT_DTYPES, "shift_right_logical": INT_DTYPES, "shift_right_arithmetic": INT_DTYPES,
    "nextafter": FLOAT_DTYPES,
}
# Looser tolerances where XLA's CPU approximations are coarser than a few ulp.
# (erfc: XLA's float32 tail is up to ~34 ulp off; test_lax_special.py covers erfc's tails.)
RTOL = {("expm1", np.dtype(np.float16)): 4e-3, ("erf_inv", np.dtype(np.float32)): 1e-5,
        ("erfc", np.dtype(np.float32)): 5e-6}
# The dialect op of each lax wrapper spelled differently.
OP_NAMES = {"bitwise_not": "not", "bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor"}

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, 1e4, -1e4, 0.999]
BINARY_SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -3.0]
def _ints(dtype: Any) -> np.ndarray:
    """The edge values of an integer type: its limits, their neighbours, -1, 0, 1 and a few more."""
    info = np.iinfo(dtype)
    values = {info.min, info.min + 1, -7, -2, -1, 0, 1, 2, 7, info.max - 1, info.max}
    return np.array(sorted(v for v in values if info.min <= v <= info.max), dtype)


def _grid(values: np.ndarray) -> Case:
    x, y = zip(*itertools.product(values, repeat=2), strict=True)
    return np.array(x, values.dtype), np.array(y, values.dtype)


def _shapes(rng: np.random.Generator) -> list[tuple[int, ...]]:
    return [random_shape(rng), random_shape(rng), *FIXED_SHAPES]


def _rtol(name: str) -> dict[np.dtype, float]:
    return {dtype: rtol for (op, dtype), rtol in RTOL.items() if op == name}


# --- unary and binary ops on random, special and edge values --------------------------------


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(rng, name):
    dtypes, domain = UNARY[name]
    cases: list[Case] = []
    for dtype in dtypes:
        cases += [(np.asarray(random_array(rng, s, dtype, *(domain or (-3.0, 3.0)))),) for s in _shapes(rng)]
        if dtype in FLOAT_DTYPES:
            cases.append((np.array(SPECIAL, dtype),))
        elif dtype in INT_DTYPES:
            cases.append((_ints(dtype),))  # INT_MIN, -1, 0, the limits
    check_cases(getattr(lax, name), getattr(jax.lax, name), cases, _rtol(name), signbits=name != "is_finite")


def _shift_amounts(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Amounts in and out of range, negatives included for signed types."""
    bits = 8 * np.dtype(dtype).itemsize
    return np.asarray(rng.integers(-2 if np.dtype(dtype).kind == "i" else 0, bits + 3, size=shape), dtype)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(rng, name):
    cases: list[Case] = []
    for dtype in BINARY[name]:
        for shape in _shapes(rng):
            x = np.asarray(random_array(rng, shape, dtype))
            y = (_shift_amounts(rng, shape, dtype) if name.startswith("shift")
                 else np.asarray(random_array(rng, shape, dtype)))
            cases.append((x, y))
        if dtype in FLOAT_DTYPES:
            cases.append(_grid(np.array(BINARY_SPECIAL, dtype)))
        elif dtype in INT_DTYPES and name.startswith("shift"):
            bits = 8 * np.dtype(dtype).itemsize
            amounts = [0, 1, bits - 1, bits, bits + 1, 2 * bits]
            amounts += [-1, -bits] if dtype in SIGNED_INTS else []
            x, y = zip(*itertools.product(_ints(dtype), amounts), strict=True)
            cases.append((np.array(x, dtype), np.array(y, dtype)))
        elif dtype in INT_DTYPES:
            cases.append(_grid(_ints(dtype)))  # INT_MIN / -1, x / 0, x % 0, wrap-around
    check_cases(getattr(lax, name), getattr(jax.lax, name), cases, signbits=True)


def test_every_op_of_the_family_has_cases():
    """A new op of dialect/ops/elementwise.py joins UNARY or BINARY (docs/passes.md, "Adding an op")."""
    tested = {OP_NAMES.get(name, name) for name in (*UNARY, *BINARY)}
    family = {name for name, op in OPS.items() if op.family == "Elementwise ops"}
    assert sorted(family - tested) == []


def test_round_ties_and_methods():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997, 8388609.0, -0.0, -0.3, np.nan],
                 np.float32)
    methods = (0, 1, jax.lax.RoundingMethod.TO_NEAREST_EVEN, "away_from_zero", "TO_NEAREST_EVEN",
               lax.RoundingMethod.AWAY_FROM_ZERO)
    jax_methods = [getattr(jax.lax.RoundingMethod, m.upper()) if isinstance(m, str) else m for m in methods]
    check_cases(lambda v: tuple(lax.round(v, m) for m in methods),
                lambda v: tuple(jax.lax.round(v, m) for m in jax_methods),
                [(x,), (x[x != 8388609.0].astype(np.float16),)], signbits=True)


def _wrapping_pow(base: int, exponent: int, dtype: np.dtype) -> int:
    if exponent < 0:
        return {1: 1, -1: -1 if exponent % 2 else 1}.get(base, 0)
    bits = 8 * dtype.itemsize
    value = pow(base, exponent, 1 << bits)
    return value - (1 << bits) if dtype.kind == "i" and value >= 1 << (bits - 1) else value


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_integer_pow(dtype):
    """jax.lax.pow rejects integers; StableHLO's integer power is XLA's wrapping square-and-multiply."""
    dtype = np.dtype(dtype)
    base, exponent = _grid(_ints(dtype))
    expected = np.array([_wrapping_pow(int(b), int(e), dtype) for b, e in zip(base, exponent, strict=True)])
    for fn in (lax.pow, mlax.jit(lax.pow)):
        np.testing.assert_array_equal(fn(base, exponent), expected.astype(dtype))


def test_integer_pow_matches_xla():
    """Values XLA's CPU gives for stablehlo.power on i32 (0 ** -1 = 0, wrapping 7 ** 20)."""
    b = np.array([2, 3, -2, 0, 1, -1, -1, 0, 7, -3, 5], np.int32)
    e = np.array([3, -1, 5, 0, -2, -3, -4, -1, 20, 33, 0], np.int32)
    xla = [8, 0, -32, 1, 1, -1, 1, 0, -1199696159, 1504003197, 1]
    np.testing.assert_array_equal(lax.pow(b, e), np.array(xla, np.int32))


def test_pow_float_to_int_exponent(rng):
    cases = [(np.asarray(random_array(rng, s, dtype)), np.asarray(rng.integers(-4, 5, size=s), np.int32))
             for dtype in FLOAT_DTYPES for s in _shapes(rng)[:3]]
    check_cases(lax.pow, jax.lax.pow, cases)
    check_cases(lambda v: lax.pow(v, 3), lambda v: jax.lax.pow(v, 3), [(c[0],) for c in cases])


@pytest.mark.usefixtures("x64")
def test_64_bit_types():
    """i64/u64 edge values and f64 specials through the integer, shift and float paths."""
    int_ops = ("div", "rem", "max", "mul", "shift_left", "shift_right_logical", "shift_right_arithmetic")
    float_ops = ("add", "div", "max", "min", "atan2", "nextafter", "pow", "rem")
    unary = ("round", "exp", "log1p", "erf_inv", "erfc", "logistic", "sign", "rsqrt")

    def apply(module: Any, names: tuple[str, ...], *args: Any) -> tuple[Any, ...]:
        return tuple(getattr(module, name)(*args) for name in names)

    int_cases = [_grid(_ints(np.int64)), _grid(_ints(np.uint64))]
    check_cases(lambda *a: apply(lax, int_ops, *a), lambda *a: apply(jax.lax, int_ops, *a), int_cases)
    check_cases(lambda v: apply(lax, ("neg", "population_count", "bitwise_not"), v),
                lambda v: apply(jax.lax, ("neg", "population_count", "bitwise_not"), v), [(_ints(np.int64),)])
    floats = np.array(BINARY_SPECIAL + [1e300, -1e-300, 0.1], np.float64)
    check_cases(lambda *a: apply(lax, float_ops, *a), lambda *a: apply(jax.lax, float_ops, *a),
                [_grid(floats)], signbits=True)
    check_cases(lambda v: apply(lax, unary, v), lambda v: apply(jax.lax, unary, v),
                [(np.array(SPECIAL, np.float64),)], signbits=True)


# --- Python scalars, rank-0 broadcasting and weak types -------------------------------------


def test_python_scalars_take_the_array_dtype(rng):
    """mlax.lax gives a Python scalar the array's dtype; jax.lax wants it typed already."""
    for dtype, (name, scalar) in zip(("float16", "bfloat16", "int8", "uint8"),
                                     (("add", 2), ("mul", 3.0), ("max", 1), ("sub", 5)), strict=True):
        x = np.asarray(random_array(rng, (3, 2), dtype))
        typed = np.asarray(scalar, x.dtype)
        fn, jax_fn = getattr(lax, name), getattr(jax.lax, name)
        check_against_jax(lambda v, f=fn, s=scalar: f(v, s), lambda v, f=jax_fn, t=typed: f(v, t), x)
        check_against_jax(lambda v, f=fn, s=scalar: f(s, v), lambda v, f=jax_fn, t=typed: f(t, v), x)


def test_rank0_operands_broadcast_as_in_jax(rng):
    x = np.asarray(random_array(rng, (2, 3), np.float32))
    check_against_jax(lax.atan2, jax.lax.atan2, x, np.float32(0.5))
    check_against_jax(lax.shift_left, jax.lax.shift_left, np.int32(3), np.arange(4, dtype=np.int32))
    check_against_jax(lambda v: lax.max(v, 0.0), lambda v: jax.lax.max(v, 0.0), x)
    with pytest.raises(TypeError, match=r"mlax\.add: lhs and rhs must have the same shape"):
        lax.add(x, np.ones((1,), np.float32))


def test_python_scalars_alone_stay_weak():
    for name, args in (("add", (1.0, 2.5)), ("mul", (3, 4)), ("exp", (0.5,)), ("neg", (2,))):
        fn, jax_fn = getattr(lax, name), getattr(jax.lax, name)
        check_against_jax(lambda f=fn, a=args: f(*a), lambda f=jax_fn, a=args: f(*a), jit=False)
        assert_same(mlax.jit(lambda *v, f=fn: f(*v))(*args), jax.jit(lambda *v, f=jax_fn: f(*v))(*args))


# --- integer_pow, square, reciprocal ---------------------------------------------------------


@pytest.mark.parametrize("kind", ["float", "int"])
def test_integer_pow_square_reciprocal(rng, kind):
    dtypes = FLOAT_DTYPES if kind == "float" else (np.int32, np.int8, np.uint8)
    exponents = (-3, -1, 0, 1, 2, 3, 5, 8) if kind == "float" else (0, 1, 2, 3, 5)
    cases = [(np.asarray(random_array(rng, s, dtype, -2.0, 2.0)),) for dtype in dtypes for s in _shapes(rng)]

    def powers(module: Any, v: Any) -> tuple[Any, ...]:
        extra = (module.reciprocal(v),) if kind == "float" else ()
        return (*(module.integer_pow(v, y) for y in exponents), module.square(v), *extra)

    check_cases(lambda v: powers(lax, v), lambda v: powers(jax.lax, v), cases)


def test_integer_pow_weak_types_and_multiplications():
    for y in (0, 1, 5, -2):
        assert_same(lax.integer_pow(1.5, y), jax.lax.integer_pow(1.5, y))
    text = mlax.make_mlir(lambda v: lax.integer_pow(v, 13))(np.float32(2))
    assert text.count('"mlax.mul"') == 5  # 13 = 0b1101: three squarings, two products


# --- errors ----------------------------------------------------------------------------------

# One dtype each op must reject.
REJECTED = {name: np.int32 for name, (dts, _) in UNARY.items() if np.int32 not in dts}
REJECTED.update({"neg": np.bool_, "sign": np.bool_, "abs": np.uint8, "population_count": np.float32,
                 "bitwise_not": np.float32})
REJECTED.update({"sub": np.bool_, "div": np.bool_, "rem": np.bool_, "pow": np.bool_, "atan2": np.int32,
                 "nextafter": np.int32})
REJECTED.update({name: np.float32 for name in BINARY if name.startswith(("bitwise", "shift"))})


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_dtype_errors_name_the_op(name):
    x = np.zeros((2,), REJECTED[name])
    args = [x] * (2 if name in BINARY else 1)
    op = OP_NAMES.get(name, name)
    for fn in (getattr(lax, name), mlax.jit(getattr(lax, name))):
        with pytest.raises(TypeError, match=rf"mlax\.{op}: (operand|lhs) must have .* element type, got"):
            fn(*args)


@pytest.mark.parametrize("name", ["add", "div", "nextafter", "shift_left"])
def test_binary_operands_must_agree(name):
    dtype = np.int32 if name == "shift_left" else np.float32
    with pytest.raises(TypeError, match=rf"mlax\.{name}: lhs and rhs must have the same shape"):
        getattr(lax, name)(np.zeros((2,), dtype), np.zeros((3,), dtype))
    with pytest.raises(TypeError, match=rf"mlax\.{name}: lhs and rhs must have the same dtype"):
        mlax.jit(getattr(lax, name))(np.zeros((2,), dtype), np.zeros((2,), np.int16))


def test_round_rejects_unknown_methods():
    x = np.zeros((2,), np.float32)
    for bad in (2, "half_up", None):
        with pytest.raises(ValueError, match="mlax.lax.round: unknown rounding_method"):
            lax.round(x, bad)
    with pytest.raises(ValueError, match=r"mlax\.round: rounding_method must be one of"):
        bind("round", x, rounding_method="half_up")
    with pytest.raises(TypeError, match=r"mlax\.round: missing attribute"):
        bind("round", x)


def test_integer_pow_errors():
    with pytest.raises(TypeError, match="mlax.lax.integer_pow: integers cannot be raised to negative"):
        lax.integer_pow(np.int32(3), -1)
    with pytest.raises(TypeError, match="mlax.lax.integer_pow: integers cannot be raised to negative"):
        lax.reciprocal(np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match="mlax.lax.integer_pow: x must be a number"):
        lax.square(np.array([True]))
    with pytest.raises(TypeError):
        lax.integer_pow(np.float32(3), 1.5)
    with pytest.raises(TypeError, match=r"mlax\.pow: lhs and rhs must have the same dtype"):
        lax.pow(np.float32(2), np.float16(2))


# --- IR --------------------------------------------------------------------------------------


def test_make_mlir_shows_the_ops():
    def f(x, y, n):
        return (lax.round(lax.exp2(x), lax.RoundingMethod.TO_NEAREST_EVEN), lax.is_finite(lax.atan2(x, y)),
                lax.shift_right_logical(n, n), lax.bitwise_not(n), lax.population_count(n))

    text = mlax.make_mlir(f)(np.ones(3, np.float32), np.ones(3, np.float32), np.arange(3, dtype=np.uint8))
    for op in ("exp2", "atan2", "shift_right_logical", "not", "population_count"):
        assert f'"mlax.{op}"' in text
    assert '"mlax.round"(%0) {rounding_method = "to_nearest_even"}' in text
    assert '"mlax.is_finite"(%2) : (tensor<3xf32>) -> tensor<3xi1>' in text
