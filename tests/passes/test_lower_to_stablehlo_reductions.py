"""mlax-lower-to-stablehlo on the accumulating ops: reduce_*, argmax/argmin, the cumulative
ops and dot_general, on every dtype they accept, run by XLA and compared with the
interpreter: bit for bit on values whose accumulation is exact in any order, within bounds
scaled by the magnitudes on random floats (XLA chooses its own order of accumulation), and
against jax's own lowering.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import mlax
from mlax.dialect import dtypes
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
    name,
    op_module,
    random_shape,
    result_specs,
    run_on_interpreter,
    run_on_xla,
    ulps,
    unsigned_zeros,
    values,
)

pytestmark = pytest.mark.usefixtures("x64")  # f64 and i64 reach jax unchanged


# --- reductions ------------------------------------------------------------------------------

REDUCTIONS = ["sum", "prod", "max", "min", "and", "or"]
CUMULATIVE = ["sum", "prod", "max", "min"]
JAX_CUMULATIVE = {"sum": lax.cumsum, "prod": lax.cumprod, "max": lax.cummax, "min": lax.cummin}


def _order_free(rng: np.random.Generator, dtype: np.dtype, shape: Shape, kind: str) -> np.ndarray:
    """Values whose sums (small integers) or products (+-1/2, +-1, +-2) are exact in any order
    of accumulation, with +-0, +-inf and NaN mixed in; other kinds get `values`."""
    if kind not in ("sum", "prod") or not dtypes.is_float(dtype):
        return values(rng, dtype, shape)
    pool = np.arange(-9.0, 10.0) if kind == "sum" else np.array([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0])
    flat = rng.choice(pool, size=int(np.prod(shape)))
    special = rng.permutation([0.0, -0.0, np.inf, -np.inf, np.nan])[:max(1, flat.size // 8)]
    flat[:len(special)] = special[:flat.size]
    return rng.permutation(flat).astype(dtype).reshape(shape)


def _random_floats(rng: np.random.Generator, dtype: np.dtype, shape: Shape) -> np.ndarray:
    """Magnitudes in [0.5, 1.5) of either sign: sums cancel, products neither overflow nor
    underflow."""
    signs = rng.choice([-1.0, 1.0], size=shape)
    return (rng.uniform(0.5, 1.5, size=shape) * signs).astype(dtype)


def check_accumulation(op: str, args: list[np.ndarray], attrs: str, bound: Callable[[np.ndarray], np.ndarray],
                       jax_fn: Callable[..., object] | None, **py_attrs: object) -> None:
    """XLA and the interpreter agree where either is not finite and within ``bound(expected)``
    (elementwise) elsewhere; given ``jax_fn``, XLA equals jax's lowering bit for bit."""
    text = op_module(op, args, result_specs(op, args, **py_attrs), attrs)
    (actual,) = run_on_xla(text, "f", args)
    (expected,) = run_on_interpreter(text, "f", args)
    if jax_fn is not None:
        assert_bits_equal(actual, np.asarray(jax.jit(jax_fn)(*args)))
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    np.testing.assert_array_equal(a[~np.isfinite(e)], e[~np.isfinite(e)])
    finite = np.isfinite(e)
    excess = np.abs(a - e)[finite] - bound(e)[finite]
    assert np.all(excess <= 0), f"{excess.max()} past the bound"


def _eps(dtype: np.dtype) -> float:
    return ulps(dtype, 1)


@pytest.mark.parametrize(("kind", "dtype"), [
    pytest.param(k, d, id=f"{k}-{name(d)}") for k in REDUCTIONS for d in DTYPES
    if accepts(f"reduce_{k}", d, dimensions=(0,))])
def test_reduce(kind: str, dtype: np.dtype, rng: np.random.Generator) -> None:
    """Over a random subset of the dimensions (none: the operand; all: a scalar); exact values
    (see `_order_free`), so XLA's order of accumulation cannot show."""
    shape = random_shape(rng, int(rng.integers(1, 4)))
    x = _order_free(rng, dtype, shape, kind)
    count = int(rng.integers(0, len(shape) + 1))
    dims = tuple(int(d) for d in np.sort(rng.choice(len(shape), size=count, replace=False)))
    check_lowering(f"reduce_{kind}", [x], attributes(dimensions=dims), dimensions=dims)


@pytest.mark.parametrize("dtype", FLOATS, ids=name)
@pytest.mark.parametrize("kind", ["sum", "prod"])
def test_reduce_random_floats(kind: str, dtype: np.dtype, rng: np.random.Generator) -> None:
    """XLA sums in its own order (the reference: NumPy's pairwise sum), so random floats agree
    within n ulps of the sum (product) of magnitudes, in f32 for f16/bf16, plus the final
    rounding; XLA equals jax's reduce bit for bit (the same HLO; jax's f16/bf16 sums also
    accumulate in f32)."""
    x = _random_floats(rng, dtype, (4, 40))
    magnitude = np.abs(x.astype(np.float64))
    scale = magnitude.sum(1) if kind == "sum" else magnitude.prod(1)
    work = np.dtype(np.float64 if dtype == np.float64 else np.float32)
    fn = jnp.sum if kind == "sum" else jnp.prod
    check_accumulation(f"reduce_{kind}", [x], attributes(dimensions=(1,)),
                       lambda e: 40 * _eps(work) * scale + _eps(dtype) * np.abs(e),
                       lambda x: fn(x, 1), dimensions=(1,))


@pytest.mark.parametrize(("kind", "dtype"), [
    pytest.param(k, d, id=f"{k}-{name(d)}") for k in CUMULATIVE for d in DTYPES
    if accepts(f"cum{k}", d, axis=0, reverse=0)])
@pytest.mark.parametrize("reverse", [0, 1])
def test_cumulative(kind: str, dtype: np.dtype, reverse: int, rng: np.random.Generator) -> None:
    """Exact values (see `_order_free`). XLA equals jax's cumulative op too, but for the sign
    of zero in float sums: jax's starts from +0.0, so its running sum of -0.0 is +0.0, where
    the reference's (and this lowering's, from -0.0) stays -0.0."""
    shape = random_shape(rng, int(rng.integers(1, 4)))
    axis = int(rng.integers(0, len(shape)))
    x = _order_free(rng, dtype, shape, kind)
    actual = check_lowering(f"cum{kind}", [x], attributes(axis=axis, reverse=reverse), axis=axis,
                            reverse=reverse)
    expected = np.asarray(jax.jit(lambda x: JAX_CUMULATIVE[kind](x, axis, reverse=bool(reverse)))(x))
    same = unsigned_zeros if kind == "sum" else (lambda x: x)
    assert_bits_equal(same(actual), same(expected))


@pytest.mark.parametrize("dtype", FLOATS, ids=name)
@pytest.mark.parametrize("kind", ["sum", "prod"])
@pytest.mark.parametrize("reverse", [0, 1])
def test_cumulative_random_floats(kind: str, dtype: np.dtype, reverse: int,
                                  rng: np.random.Generator) -> None:
    """XLA's CPU turns a long cumulative reduce_window into a blocked scan, another order of
    operations than the reference's running sum (both round every step to the operand type):
    random floats agree within 2n ulps of the running sum (product) of magnitudes, and equal
    jax's cumulative op bit for bit."""
    x = _random_floats(rng, dtype, (3, 60))
    magnitude = np.abs(np.flip(x, 1) if reverse else x).astype(np.float64)
    scale = np.cumsum(magnitude, 1) if kind == "sum" else np.cumprod(magnitude, 1)
    scale = np.flip(scale, 1) if reverse else scale
    check_accumulation(f"cum{kind}", [x], attributes(axis=1, reverse=reverse),
                       lambda e: 2 * 60 * _eps(dtype) * scale,
                       lambda x: JAX_CUMULATIVE[kind](x, 1, reverse=bool(reverse)), axis=1, reverse=reverse)


def _tied(rng: np.random.Generator, dtype: np.dtype, shape: Shape) -> np.ndarray:
    """Values with many ties: few distinct ones (+-0 and NaN among the floats)."""
    pool = values(rng, dtype, (6,))
    return pool[rng.integers(0, 6, size=shape)]


@pytest.mark.parametrize("index", [np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.uint8)], ids=name)
@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("kind", ["max", "min"])
def test_arg_extreme(kind: str, dtype: np.dtype, index: np.dtype, rng: np.random.Generator) -> None:
    """The first extreme along the axis; a NaN is the extreme (the first NaN wins); equal
    values (-0 and +0 too) give the lower index. Equal to jax's argmax/argmin."""
    shape = random_shape(rng, int(rng.integers(1, 4)))
    axis = int(rng.integers(0, len(shape)))
    x = _tied(rng, dtype, shape)
    fn = lax.argmax if kind == "max" else lax.argmin
    check_lowering(f"arg{kind}", [x], attributes(axis=axis, index_dtype=name(index)), axis=axis,
                   index_dtype=index, jax_fn=lambda x: fn(x, axis, index))


@pytest.mark.parametrize("index", [np.dtype(np.int8), np.dtype(np.uint8)], ids=name)
@pytest.mark.parametrize("kind", ["max", "min"])
def test_arg_extreme_wraps(kind: str, index: np.dtype, rng: np.random.Generator) -> None:
    """Indices past the index type's range wrap (as the reference's astype): the search counts
    in i64, so a wrapped index never decides a tie."""
    x = rng.uniform(-1, 1, size=(3, 300)).astype(np.float32)
    extreme = 100.0 if kind == "max" else -100.0
    x[0, 299] = np.nan  # index 299 wraps to 43
    x[1, 260] = extreme
    x[2, [150, 280]] = extreme  # a tie of wrapped (150 -> -106 or 150) and unwrapped (280 -> 24)
    check_lowering(f"arg{kind}", [x], attributes(axis=1, index_dtype=name(index)), axis=1,
                   index_dtype=index)


def test_argmax_feeding_a_bitwise_op_runs_on_xla() -> None:
    """The fuzzer's reproducer: XLA's CPU compiler crashed (SIGSEGV) on an i64 (value, index)
    reduce converted to i32 and fed to ``or``; counting in i32, as jax does, runs."""
    x = np.array([[1, 7, 5], [9, 1, 7]], np.float32)
    y = np.array([2, 9, 1], np.int32)
    got = mlax.jit(lambda a, b: mlax.lax.bitwise_or(mlax.lax.argmax(a, 0, np.int32), b), backend="xla")(x, y)
    np.testing.assert_array_equal(np.asarray(got), lax.bitwise_or(lax.argmax(x, 0, np.int32), y))


# --- dot_general -----------------------------------------------------------------------------

DOT_TYPES = [(np.float32, np.float32), (np.float64, np.float64), (np.float16, np.float16),
             (BF16, BF16), (BF16, np.float32), (np.float16, np.float32), (np.float64, np.float32),
             (np.int8, np.int32), (np.int16, np.int16), (np.int32, np.int32), (np.int64, np.int64),
             (np.uint8, np.uint32), (np.uint32, np.uint32), (np.int8, np.float32),
             (np.int32, np.float32), (np.bool_, np.bool_), (np.bool_, np.int32), (np.bool_, np.float32)]
DOT_PARAMS = [pytest.param(np.dtype(a), np.dtype(r), id=f"{name(a)}-{name(r)}") for a, r in DOT_TYPES]

# (batch, contracting, lhs free, rhs free) dimension counts: a matmul, a batched one, an outer
# product, an elementwise product, a matrix-vector product over two contracting dimensions,
# and a full contraction to a scalar.
DOT_STRUCTURES = [(0, 1, 1, 1), (1, 1, 1, 1), (0, 0, 1, 1), (1, 0, 0, 0), (0, 2, 1, 0), (0, 2, 0, 0)]
Numbers = dict[str, tuple[int, ...]]


def _dot_case(rng: np.random.Generator, counts: tuple[int, int, int, int]) -> tuple[Shape, Shape, Numbers]:
    """Random shapes and dimension numbers with ``counts`` (see `DOT_STRUCTURES`), each side's
    dimensions in a random order."""
    sizes = {role: [int(n) for n in rng.integers(1, 5, size=count)]
             for role, count in (("batch", counts[0]), ("contract", counts[1]))}
    shapes, numbers = [], {}
    for side, free in (("lhs", counts[2]), ("rhs", counts[3])):
        roles = ([("batch", i) for i in range(len(sizes["batch"]))]
                 + [("contract", i) for i in range(len(sizes["contract"]))]
                 + [("free", int(n)) for n in rng.integers(1, 5, size=free)])
        roles = [roles[i] for i in rng.permutation(len(roles))]
        shapes.append(tuple(sizes[r][i] if r != "free" else i for r, i in roles))
        for role, key in (("batch", "batch"), ("contract", "contracting")):
            where = {i: d for d, (r, i) in enumerate(roles) if r == role}
            numbers[f"{side}_{key}_dimensions"] = tuple(where[i] for i in range(len(sizes[role])))
    return shapes[0], shapes[1], numbers


def _jax_dot(numbers: Numbers, result: np.dtype) -> Callable[..., object]:
    dimension_numbers = ((numbers["lhs_contracting_dimensions"], numbers["rhs_contracting_dimensions"]),
                         (numbers["lhs_batch_dimensions"], numbers["rhs_batch_dimensions"]))
    return lambda a, b: lax.dot_general(a, b, dimension_numbers, preferred_element_type=result)


@pytest.mark.parametrize(("operand", "result"), DOT_PARAMS)
@pytest.mark.parametrize("counts", DOT_STRUCTURES, ids=lambda c: "b{}c{}l{}r{}".format(*c))
def test_dot_general(operand: np.dtype, result: np.dtype, counts: tuple[int, int, int, int],
                     rng: np.random.Generator) -> None:
    """Small integer values (floats too), so every product and sum is exact in any order and
    the result is bit for bit but for the sign of zero (XLA's sum of -0.0 products is -0.0,
    NumPy's matmul starts from +0.0); integers wrap in the result type."""
    lhs_shape, rhs_shape, numbers = _dot_case(rng, counts)
    if dtypes.is_float(operand):
        lhs, rhs = (rng.integers(-4, 5, size=s).astype(operand) for s in (lhs_shape, rhs_shape))
    else:
        lhs, rhs = values(rng, operand, lhs_shape), values(rng, operand, rhs_shape)
    check_lowering("dot_general", [lhs, rhs], attributes(**numbers, result_dtype=name(result)),
                   result_dtype=result, **numbers, zero_signs=False,
                   jax_fn=None if operand == BOOL else _jax_dot(numbers, result))


@pytest.mark.parametrize(("operand", "result"), [p for p in DOT_PARAMS if dtypes.is_float(p.values[0])])
def test_dot_general_random_floats(operand: np.dtype, result: np.dtype, rng: np.random.Generator) -> None:
    """Random floats: XLA's CPU (Eigen) sums in its own order, f16/bf16 in f32 rounded once as
    the reference, so the results agree within n ulps of the sum of magnitudes (in f32 for
    the halves) plus the final rounding. XLA equals jax's dot_general bit for bit where the
    operands widen into the result type; narrowing (f64 -> f32) the reference rounds the
    operands first, jax's preferred_element_type only the result."""
    numbers = {"lhs_contracting_dimensions": (1,), "rhs_contracting_dimensions": (0,),
               "lhs_batch_dimensions": (), "rhs_batch_dimensions": ()}
    lhs, rhs = _random_floats(rng, operand, (8, 64)), _random_floats(rng, operand, (64, 5))
    magnitude = np.abs(lhs.astype(np.float64)) @ np.abs(rhs.astype(np.float64))
    work = np.dtype(np.float64 if result == np.float64 else np.float32)
    check_accumulation("dot_general", [lhs, rhs], attributes(**numbers, result_dtype=name(result)),
                       lambda e: 64 * _eps(work) * magnitude + _eps(result) * np.abs(e),
                       _jax_dot(numbers, result) if np.can_cast(operand, result, "safe") else None,
                       result_dtype=result, **numbers)


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.int8), np.dtype(np.uint32), BOOL],
                         ids=name)
def test_empty_operands(dtype: np.dtype, rng: np.random.Generator) -> None:
    """Reducing zero elements gives the identity; empty cumulative ops and contractions over
    nothing (zeros) lower too."""
    x = values(rng, dtype, (2, 0, 3))
    for kind in REDUCTIONS:
        if accepts(f"reduce_{kind}", dtype, dimensions=(1,)):
            check_lowering(f"reduce_{kind}", [x], attributes(dimensions=(1,)), dimensions=(1,))
    if dtype != BOOL:
        check_lowering("cumsum", [x], attributes(axis=1, reverse=1), axis=1, reverse=1)
    numbers = {"lhs_contracting_dimensions": (1,), "rhs_contracting_dimensions": (0,),
               "lhs_batch_dimensions": (0,), "rhs_batch_dimensions": (2,)}
    y = values(rng, dtype, (0, 4, 2))
    check_lowering("dot_general", [x, y], attributes(**numbers, result_dtype=name(dtype)),
                   result_dtype=dtype, **numbers)
