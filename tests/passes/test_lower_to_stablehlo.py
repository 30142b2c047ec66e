"""mlax-lower-to-stablehlo on the elementwise, comparison, conversion and structural ops:
each op on random shapes and values of every dtype it accepts (edge cases mixed in), run by
XLA and compared with the interpreter, bit for bit unless `TOLERANCE` says why not (then XLA
must still equal jax's own lowering bit for bit). The shape ops, the reductions and
dot_general have test_lower_to_stablehlo_{shape,reductions}.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import jax
import numpy as np
import pytest
from jax import lax

from mlax.dialect import dtypes
from mlax.dialect.registry import OPS
from mlax.passes.lower_to_stablehlo import RULES
from tests.passes.stablehlo_harness import (
    BF16,
    BOOL,
    DTYPES,
    FLOATS,
    Shape,
    accepts,
    assert_bits_equal,
    attributes,
    check_lowering,
    lower,
    name,
    op_module,
    random_shape,
    run_on_interpreter,
    run_on_xla,
    tensor_text,
    ulps,
    values,
)

pytestmark = pytest.mark.usefixtures("x64")  # f64 and i64 reach jax unchanged


# --- elementwise -----------------------------------------------------------------------------

UNARY = ["neg", "abs", "sign", "floor", "ceil", "exp", "exp2", "expm1", "log", "log1p", "sqrt",
         "rsqrt", "cbrt", "sin", "cos", "tan", "tanh", "logistic", "erf", "erfc", "erf_inv",
         "is_finite", "not", "population_count"]
BINARY = ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "and", "or", "xor",
          "shift_left", "shift_right_logical", "shift_right_arithmetic", "nextafter"]
JAX = {
    "neg": lax.neg, "abs": lax.abs, "sign": lax.sign, "floor": lax.floor, "ceil": lax.ceil,
    "exp": lax.exp, "exp2": lax.exp2, "expm1": lax.expm1, "log": lax.log, "log1p": lax.log1p,
    "sqrt": lax.sqrt, "rsqrt": lax.rsqrt, "cbrt": lax.cbrt, "sin": lax.sin, "cos": lax.cos,
    "tan": lax.tan, "tanh": lax.tanh, "logistic": lax.logistic, "erf": lax.erf, "erfc": lax.erfc,
    "erf_inv": lax.erf_inv, "is_finite": lax.is_finite, "not": lax.bitwise_not,
    "population_count": lax.population_count, "add": lax.add, "sub": lax.sub, "mul": lax.mul,
    "div": lax.div, "rem": lax.rem, "pow": lax.pow, "max": lax.max, "min": lax.min,
    "atan2": lax.atan2, "and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor,
    "shift_left": lax.shift_left, "shift_right_logical": lax.shift_right_logical,
    "shift_right_arithmetic": lax.shift_right_arithmetic, "nextafter": lax.nextafter,
}

# Where XLA and the reference differ, in ulps of the operand type: the reference computes with
# NumPy/SciPy (correctly rounded, or nearly), XLA's CPU with its own polynomial approximations
# (and f16/bf16 in f32, rounded once, so those are exact or one ulp off when the f32 value lies
# near a rounding boundary). XLA equals jax bit for bit on all of them (`check_lowering` asserts it).
TOLERANCE: dict[str, float] = {
    "exp": 2, "exp2": 2, "expm1": 3, "log": 2, "log1p": 2, "rsqrt": 2, "cbrt": 3, "sin": 2,
    "cos": 2, "tan": 2, "tanh": 3, "logistic": 2, "erf": 3, "erfc": 2, "erf_inv": 2, "pow": 2,
    "atan2": 3,
}
# f64 exceptions: XLA's log1p is log(1 + x) away from 0 (~100 ulps near x = -0.4), its erfc
# loses ~20 ulps in the tail (x ~ 9), its erf_inv evaluates Giles' polynomials with fused
# multiply-adds (the reference cannot, NumPy has no exact f64 fma).
TOLERANCE_F64: dict[str, float] = {"log1p": 256, "erfc": 64, "erf_inv": 32}


def _tolerance(op: str, dtype: np.dtype) -> float:
    if not dtypes.is_float(dtype) or op not in TOLERANCE:
        return 0.0
    return ulps(dtype, TOLERANCE_F64.get(op, TOLERANCE[op]) if dtype == np.float64 else TOLERANCE[op])


def _jax_fn(op: str, dtype: np.dtype) -> Callable[..., object] | None:
    """jax's function for ``op`` on ``dtype``, where jax takes that dtype."""
    if op == "pow" and not dtypes.is_float(dtype):
        return None  # lax.pow takes float bases only; jnp.power reads 6 exponent bits
    if dtype == BOOL and op in ("add", "mul"):
        return {"add": lax.bitwise_or, "mul": lax.bitwise_and}[op]  # lax refuses booleans
    return JAX[op]


def cases(ops: Sequence[str], n: int) -> list:
    """(op, dtype) for every dtype each op takes."""
    return [pytest.param(op, dtype, id=f"{op}-{name(dtype)}")
            for op in ops for dtype in DTYPES if accepts(op, dtype, n)]


@pytest.mark.parametrize(("op", "dtype"), cases(UNARY, 1))
def test_unary(op: str, dtype: np.dtype, rng: np.random.Generator) -> None:
    x = values(rng, dtype, random_shape(rng))
    check_lowering(op, [x], rtol=_tolerance(op, dtype), jax_fn=_jax_fn(op, dtype))


@pytest.mark.parametrize(("op", "dtype"), cases(BINARY, 2))
def test_binary(op: str, dtype: np.dtype, rng: np.random.Generator) -> None:
    shape = random_shape(rng)
    x, y = values(rng, dtype, shape), values(rng, dtype, shape)
    x.reshape(-1)[:2] = y.reshape(-1)[:2]  # ties: max/min of equal values, x % x, nextafter(x, x)
    if op.startswith("shift"):  # amounts past the width, and negative ones
        bits = 8 * dtype.itemsize
        y = rng.integers(-2, bits + 3, size=shape).astype(f"i{dtype.itemsize}").view(dtype)
    check_lowering(op, [x, y], rtol=_tolerance(op, dtype), jax_fn=_jax_fn(op, dtype))


@pytest.mark.parametrize("dtype", FLOATS, ids=name)
@pytest.mark.parametrize("method", ["away_from_zero", "to_nearest_even"])
def test_round(method: str, dtype: np.dtype, rng: np.random.Generator) -> None:
    x = values(rng, dtype, random_shape(rng, 2))
    jax_method = {"away_from_zero": lax.RoundingMethod.AWAY_FROM_ZERO,
                  "to_nearest_even": lax.RoundingMethod.TO_NEAREST_EVEN}[method]
    check_lowering("round", [x], attributes(rounding_method=f'"{method}"'), rounding_method=method,
                   jax_fn=lambda x: lax.round(x, jax_method))


DIRECTIONS = {"EQ": lax.eq, "NE": lax.ne, "LT": lax.lt, "LE": lax.le, "GT": lax.gt, "GE": lax.ge}


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_compare(direction: str, dtype: np.dtype, rng: np.random.Generator) -> None:
    """Floats compare as IEEE values (NaN unordered, -0 == +0), unsigned integers and booleans
    unsigned."""
    shape = random_shape(rng)
    x, y = values(rng, dtype, shape), values(rng, dtype, shape)
    x.reshape(-1)[:2] = y.reshape(-1)[:2]
    check_lowering("compare", [x, y], attributes(comparison_direction=f'"{direction}"'),
                   comparison_direction=direction, jax_fn=DIRECTIONS[direction])


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("rank0", [False, True], ids=["pred", "rank0-pred"])
def test_select(rank0: bool, dtype: np.dtype, rng: np.random.Generator) -> None:
    shape = random_shape(rng)
    pred = values(rng, BOOL, () if rank0 else shape)
    check_lowering("select", [pred, values(rng, dtype, shape), values(rng, dtype, shape)])


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("bounds", [(False, False), (True, False), (True, True)],
                         ids=["full", "rank0-min", "rank0-both"])
def test_clamp(bounds: tuple[bool, bool], dtype: np.dtype, rng: np.random.Generator) -> None:
    """min(max(x, lo), hi): NaN in any operand gives NaN, lo > hi gives hi, -0 < +0."""
    shape = random_shape(rng, 2)
    lo, hi = (values(rng, dtype, () if rank0 else shape) for rank0 in bounds)
    check_lowering("clamp", [lo, values(rng, dtype, shape), hi],
                   jax_fn=None if dtype == BOOL else lax.clamp)


@pytest.mark.parametrize("dtype", FLOATS, ids=name)
@pytest.mark.parametrize("op", ["max", "min", "clamp"])
def test_signed_zeros_and_nan(op: str, dtype: np.dtype) -> None:
    """max(-0, +0) = +0 and min(-0, +0) = -0 in either order; NaN in either operand is NaN."""
    pairs = [(-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0), (0.0, 0.0), (np.nan, 0.0), (1.0, np.nan),
             (-np.inf, np.inf), (2.0, -3.0), (-0.0, 1.0), (0.0, -1.0)]
    x, y = (np.array(v, dtype) for v in zip(*pairs, strict=True))
    if op == "clamp":  # clamp(y, x, -0.0)
        check_lowering(op, [y, x, np.full_like(x, -0.0)], jax_fn=lax.clamp)
    else:
        check_lowering(op, [x, y], jax_fn=JAX[op])


def _flush(x: np.ndarray) -> np.ndarray:
    """Subnormal elements of ``x`` replaced by zeros of their sign."""
    tiny = float(np.finfo(np.float32 if x.dtype == BF16 else x.dtype).tiny)
    return np.where(np.abs(x.astype(np.float64)) < tiny, x * np.zeros((), x.dtype), x)


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.float64), BF16], ids=name)
@pytest.mark.parametrize("op", ["mul", "add", "exp"])
def test_subnormals_flush(op: str, dtype: np.dtype) -> None:
    """A known difference: XLA's CPU flushes subnormal operands and results of f32, f64 and bf16
    to zero (f16 computes in f32, where they are normal), the reference keeps them. XLA equals
    jax, and the reference with its operands and results flushed."""
    tiny = float(np.finfo(np.float32 if dtype == BF16 else dtype).tiny)
    x = np.array([tiny / 4, tiny, tiny * 8, -tiny / 2, 1.0, -1e-3], dtype)
    y = np.array([tiny / 4, 0.25, -0.0, 1.0, tiny / 2, 1e-3], dtype)
    args = [np.array([-1e3, -88.5, -90.0, -720.0, 1.0, -745.0], dtype)] if op == "exp" else [x, y]
    text = op_module(op, args, [(x.shape, dtype)])
    (actual,) = run_on_xla(text, "f", args)
    (flushed,) = run_on_interpreter(text, "f", [_flush(a) for a in args])
    assert_bits_equal(actual, np.asarray(jax.jit(JAX[op])(*args)))
    assert_bits_equal(actual, _flush(flushed), rtol=_tolerance(op, dtype), atol=0.0)
    (kept,) = run_on_interpreter(text, "f", args)
    assert not np.array_equal(kept, actual)  # the reference keeps a subnormal somewhere


# --- convert, bitcast_convert ----------------------------------------------------------------

def _convertible(rng: np.random.Generator, dtype: np.dtype, shape: Shape) -> np.ndarray:
    """`values`, with floats spread over magnitudes past every integer range (saturation)."""
    x = values(rng, dtype, shape)
    if dtypes.is_float(dtype):
        with np.errstate(over="ignore"):
            x = (x * rng.choice([1.0, 1e2, 1e5, 1e10, 1e20], size=shape)).astype(dtype)
    return x


@pytest.mark.parametrize("target", DTYPES, ids=name)
@pytest.mark.parametrize("source", DTYPES, ids=name)
def test_convert(source: np.dtype, target: np.dtype, rng: np.random.Generator) -> None:
    """Float -> int truncates and saturates (NaN -> 0), int -> int wraps, anything -> i1 is
    x != 0, and f16/bf16 are reached through f32."""
    x = _convertible(rng, source, random_shape(rng, 2))
    check_lowering("convert", [x], attributes(new_dtype=name(target)), new_dtype=target,
                   jax_fn=lambda x: lax.convert_element_type(x, target))


BITCASTS = [(a, b) for a in DTYPES for b in DTYPES
            if (a == BOOL) == (b == BOOL) and (a != BOOL or b == BOOL)]


@pytest.mark.parametrize(("source", "target"), [pytest.param(a, b, id=f"{name(a)}-{name(b)}")
                                                for a, b in BITCASTS])
def test_bitcast_convert(source: np.dtype, target: np.dtype, rng: np.random.Generator) -> None:
    """Same width: same shape; narrower: a new minor dimension; wider: the minor one consumed."""
    shape = random_shape(rng, 2)
    if target.itemsize > source.itemsize:
        shape = (*shape, target.itemsize // source.itemsize)
    x = values(rng, source, shape)
    check_lowering("bitcast_convert", [x], attributes(new_dtype=name(target)), new_dtype=target,
                   jax_fn=lambda x: lax.bitcast_convert_type(x, target))


# --- constant, iota, stop_gradient -------------------------------------------------------------

def _dense(x: np.ndarray) -> str:
    """``dense<...>`` text of ``x``: the hex of its bytes (exact for NaN and -0 too), booleans
    as literals (MLIR packs i1 hex data differently)."""
    literal = str(x.tolist()).lower() if x.dtype == BOOL else f'"0x{x.tobytes().hex().upper()}"'
    return f"dense<{literal}> : {tensor_text(x.shape, x.dtype)}"


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
def test_constant(dtype: np.dtype, rng: np.random.Generator) -> None:
    x = values(rng, dtype, random_shape(rng))
    out = check_lowering("constant", [], attributes(value=_dense(x)), value=x)
    assert_bits_equal(out, x)


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != BOOL], ids=name)
def test_iota(dtype: np.dtype, rng: np.random.Generator) -> None:
    """300 counts: i8/ui8 wrap, bf16 rounds past 256."""
    shape = (int(rng.integers(1, 4)), 300)
    dimension = int(rng.integers(0, 2))
    attrs = attributes(shape=shape, dtype=name(dtype), dimension=dimension)
    check_lowering("iota", [], attrs, shape=shape, dtype=dtype, dimension=dimension,
                   jax_fn=lambda: lax.broadcasted_iota(dtype, shape, dimension))


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
def test_stop_gradient(dtype: np.dtype, rng: np.random.Generator) -> None:
    x = values(rng, dtype, random_shape(rng))
    assert_bits_equal(check_lowering("stop_gradient", [x]), x)


# --- the rule table --------------------------------------------------------------------------

def test_every_elementwise_op_is_checked_against_jax() -> None:
    """A new op of dialect/ops/elementwise.py joins UNARY or BINARY (docs/passes.md, "Adding an op");
    round has its own test (its attribute)."""
    family = {name for name, op in OPS.items() if op.family == "Elementwise ops"}
    assert sorted(family - {*UNARY, *BINARY, "round"}) == []


def test_printed_spelling(rng: np.random.Generator) -> None:
    """The printed StableHLO names each op as XLA spells it (a few spot checks; lit-tests/
    Conversion/mlax-to-stablehlo has the rest)."""
    x = values(rng, np.dtype(np.uint32), (2, 3))
    text = lower(op_module("compare", [x, x], [((2, 3), BOOL)], attributes(comparison_direction='"LT"')))
    assert '"mlax.' not in text
    assert ("#stablehlo<comparison_direction LT>" in text
            and "#stablehlo<comparison_type UNSIGNED>" in text), text


def test_every_op_of_the_dialect_has_a_rule() -> None:
    assert sorted(set(OPS) - set(RULES)) == []


def test_a_large_boolean_constant_reaches_xla(rng: np.random.Generator) -> None:
    """XLA reads hex i1 data as packed bits, our MLIR prints a byte per element."""
    from mlir import ir

    from mlax.dialect import get_context
    from mlax.dialect.attrs import dense_elements

    bits = rng.random((5, 5, 6)) < 0.5
    with get_context(), ir.Location.unknown():
        constant = dense_elements(bits)
    text = (f'func.func @f() -> tensor<5x5x6xi1> {{\n'
            f'  %0 = "mlax.constant"() {{value = {constant}}} : () -> tensor<5x5x6xi1>\n'
            f'  return %0 : tensor<5x5x6xi1>\n}}\n')
    (out,) = run_on_xla(text, "f", [])
    np.testing.assert_array_equal(out, bits)
