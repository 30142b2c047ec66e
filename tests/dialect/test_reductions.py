"""Reductions, arg-reductions and cumulative ops against jax.lax (eager and jitted)."""

from __future__ import annotations

from functools import partial
from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.lax as lax
from mlax.core import bind
from tests.oracle import check_against_jax, random_array

BF16 = ml_dtypes.bfloat16
FLOATS = (np.float32, np.float16, BF16)
NUMERIC = FLOATS + (np.int32, np.int8, np.uint32)
ALL = NUMERIC + (np.bool_,)
INT_OR_BOOL = (np.int32, np.int8, np.uint32, np.uint8, np.bool_)
KIND_DTYPES = {"sum": NUMERIC, "prod": NUMERIC, "max": ALL, "min": ALL, "and": INT_OR_BOOL,
               "or": INT_OR_BOOL}
ACCUMULATING = {"sum", "prod"}


def _shapes(rng: np.random.Generator) -> list[tuple[int, ...]]:
    """Rank 0, size-1, size-0 and a random rank-3/4 shape with non-power-of-two sizes."""
    rank = int(rng.integers(3, 5))
    return [(), (1, 5), (3, 0, 2), tuple(int(d) for d in rng.integers(1, 6, size=rank))]


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any, kind: str) -> np.ndarray:
    """Random values; products use magnitudes near 1 so long float products stay finite."""
    if kind == "prod" and dtype in FLOATS:
        signs = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
        return (signs * rng.uniform(0.6, 1.5, shape)).astype(dtype)
    return random_array(rng, shape, dtype)


def _random_dims(rng: np.random.Generator, ndim: int) -> tuple[int, ...]:
    """A random subset of the dimensions in random (non-canonical) order."""
    count = int(rng.integers(0, ndim + 1))
    return tuple(int(d) for d in rng.permutation(ndim)[:count])


KIND_DTYPE_PAIRS = [pytest.param(kind, dtype, id=f"{kind}-{np.dtype(dtype).name}")
                    for kind, accepted in KIND_DTYPES.items() for dtype in accepted]


Case = tuple[str, np.ndarray, tuple[Any, ...]]


def check_cases(cases: list[Case], **tol: float) -> None:
    """Check ``op(x, *args)`` for every case against jax.lax in one jitted JAX program (one compile)."""

    def run(module: Any) -> Any:
        return lambda *xs: [getattr(module, op)(x, *args) for x, (op, _, args) in zip(xs, cases, strict=True)]

    check_against_jax(run(lax), jax.jit(run(jax.lax)), *(x for _, x, _ in cases), **tol)


def _exact(op: str, x: np.ndarray, args: tuple[Any, ...]) -> tuple[np.ndarray, np.ndarray, int]:
    """``op`` (a float sum or product, plain or cumulative) in float64, the same op on |x| (the
    magnitude of the terms each result element combines) and how many terms that is at most."""
    x64 = x.astype(np.float64)
    combine = np.prod if op.endswith("prod") else np.sum
    if op.startswith("reduce_"):
        (dims,) = args
        terms = int(np.prod([x.shape[d] for d in dims]))
        return combine(x64, axis=dims), combine(np.abs(x64), axis=dims), terms
    axis, reverse = args
    running = np.cumprod if op.endswith("prod") else np.cumsum

    def scan(v: np.ndarray) -> np.ndarray:
        return np.flip(running(np.flip(v, axis), axis), axis) if reverse else running(v, axis)

    return scan(x64), scan(np.abs(x64)), x.shape[axis]


def _assert_within(got: Any, want: Any, bound: np.ndarray, what: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    bound = np.broadcast_to(bound, got.shape)
    error = np.abs(got.astype(np.float64) - want.astype(np.float64))
    bad = ~(error <= bound)  # NaN is off too: the inputs are finite
    assert not bad.any(), (f"{what}: {int(bad.sum())} of {bad.size} elements off: got {got[bad][:4]}, "
                           f"want {want[bad][:4]}, error bound {bound[bad][:4]}")


def check_accumulations(cases: list[Case], dtype: Any) -> None:
    """Float sums and products, eagerly and jitted, per element against jax.lax and float64.

    Error bounds scale with the dtype's eps and the magnitude M of the combined terms (sum or
    product of |x|), never an absolute slack: mlax's reductions accumulate in f32 and round
    once (docs/dialect.md), so they are within 1 ulp plus n f32 ulps of M of the exact value;
    XLA accumulates halves in the half type, so jax's are allowed a pairwise sum's error bound,
    (1 + log2 n) eps of M; cumulative ops round every partial result (both), so n eps of M.
    """
    eps, eps32 = float(ml_dtypes.finfo(dtype).eps), float(np.finfo(np.float32).eps)

    def run(module: Any) -> Any:
        return lambda *xs: [getattr(module, op)(x, *args) for x, (op, _, args) in zip(xs, cases, strict=True)]

    xs = [x for _, x, _ in cases]
    expected = jax.jit(run(jax.lax))(*xs)
    for mode, fn in (("eager", run(lax)), ("jit", mlax.jit(run(lax)))):
        for (op, x, args), got, want in zip(cases, fn(*xs), expected, strict=True):
            exact, magnitude, n = _exact(op, x, args)
            got_dtype, want_dtype = np.asarray(got).dtype, np.asarray(want).dtype
            assert got_dtype == want_dtype, f"{mode} {op}: dtype {got_dtype} != {want_dtype}"
            if op.startswith("cum"):
                to_exact = to_jax = n * eps * magnitude
            else:
                to_exact = eps * np.abs(exact) + n * eps32 * magnitude
                to_jax = eps * (np.abs(exact) + (1 + np.log2(max(n, 1))) * magnitude)
            _assert_within(got, want, to_jax, f"{mode} {op}{args} {x.shape} against jax")
            _assert_within(got, exact, to_exact, f"{mode} {op}{args} {x.shape} against float64")


@pytest.mark.parametrize("kind, dtype", KIND_DTYPE_PAIRS)
def test_reduce_matches_jax(kind: str, dtype: Any, rng: np.random.Generator) -> None:
    cases = [(f"reduce_{kind}", _values(rng, shape, dtype, kind), (_random_dims(rng, len(shape)),))
             for shape in _shapes(rng)]
    if kind in ACCUMULATING and dtype in FLOATS:
        check_accumulations(cases, dtype)
    else:
        check_cases(cases)


@pytest.mark.parametrize("dtype", ALL + (np.uint8,), ids=lambda d: np.dtype(d).name)
def test_empty_reduction_gives_the_identity(dtype: Any) -> None:
    x = np.zeros((2, 0, 3), dtype)
    check_cases([(f"reduce_{kind}", x, ((1, 0),)) for kind, accepted in KIND_DTYPES.items()
                 if dtype in accepted + (np.uint8,) and (kind in ("and", "or")) <= (dtype in INT_OR_BOOL)])


def _with_specials(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Floats with NaN, +-inf and +-0 sprinkled in; row 1 has no NaN."""
    x = random_array(rng, shape, np.float32)
    choice = rng.integers(0, 8, size=shape)
    x = np.select([choice == 0, choice == 1, choice == 2, choice == 3, choice == 4],
                  [np.nan, np.inf, -np.inf, 0.0, -0.0], x)
    x[1] = np.where(np.isnan(x[1]), 1.0, x[1])
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_nan_and_inf(dtype: Any, rng: np.random.Generator) -> None:
    x = _with_specials(rng, (4, 6, 5), dtype)
    check_cases([("reduce_max", x, ((1, 2),)), ("reduce_min", x, ((2, 1),)), ("argmax", x, (1, np.int32)),
                 ("argmin", x, (2, np.int32)), ("cummax", x, (1,)), ("cummin", x, (2, True))])


def _apply(op: str, args: tuple[Any, ...], x: Any) -> Any:
    return getattr(lax, op)(x, *args)


def test_signed_zeros_order_as_xla(rng: np.random.Generator) -> None:
    """XLA orders -0.0 below +0.0: max of {-0, +0} is +0 and min is -0, in any order."""
    x = np.where(rng.random((6, 9)) < 0.5, -0.0, 0.0).astype(np.float32)
    ops = [("reduce_max", ((1,),)), ("reduce_min", ((1,),)), ("cummax", (1, True)), ("cummin", (1,))]
    for op, args in ops:
        expected = np.signbit(np.asarray(getattr(jax.lax, op)(x, *args)))
        fn = partial(_apply, op, args)
        for run in (fn, mlax.jit(fn)):
            np.testing.assert_array_equal(np.signbit(np.asarray(run(x))), expected, err_msg=op)


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: np.dtype(d).name)
def test_arg_extreme_matches_jax(dtype: Any, rng: np.random.Generator) -> None:
    cases = []
    shapes = [(7,), (1, 5), (4, 0, 3), tuple(int(d) for d in rng.integers(1, 6, size=3))]
    for shape, index_dtype in zip(shapes, [np.int32, np.int8, np.uint32, np.int32], strict=True):
        x = random_array(rng, shape, dtype, low=-2, high=2)
        if np.dtype(dtype).kind in "iu":
            x = (x % 3).astype(dtype)  # many ties: the first index must win
        for op in ("argmax", "argmin"):
            axis = int(rng.choice([a for a in range(len(shape)) if shape[a] > 0]))
            cases.append((op, x, (axis, index_dtype)))
    check_cases(cases)


@pytest.mark.parametrize("kind", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("dtype", NUMERIC + (np.uint8,), ids=lambda d: np.dtype(d).name)
def test_cumulative_matches_jax(kind: str, dtype: Any, rng: np.random.Generator) -> None:
    shapes = [(9,), (1, 4), (3, 0, 2), tuple(int(d) for d in rng.integers(1, 6, size=4)), (7, 3)]
    cases = [(f"cum{kind}", _values(rng, shape, dtype, kind), (int(rng.integers(0, len(shape))), reverse))
             for shape, reverse in zip(shapes, [False, True, False, True, True], strict=True)]
    if kind in ACCUMULATING and dtype in FLOATS:
        check_accumulations(cases, dtype)
    else:
        check_cases(cases)


def test_cumulative_accumulates_in_the_operand_dtype() -> None:
    """JAX rounds every partial sum to the operand type: int8 wraps, f16 rounds each step."""
    wraps = np.array([100, 100, -100, 50, 127], np.int8)
    halves = np.array([1000.0] + [0.3] * 7, np.float16)  # f32 accumulation would give other values
    check_cases([("cumsum", wraps, ()), ("cumprod", wraps, (0, True)), ("cumsum", halves, ())], rtol=0.0)


def test_integer_reductions_wrap() -> None:
    x = np.array([[100, 100, 100, 27], [-128, -1, 1, 3]], np.int8)
    big = np.array([2**31 - 1, 2**31 - 1, 7], np.uint32)
    check_cases([("reduce_sum", x, ((1,),)), ("reduce_prod", x, ((1,),)), ("reduce_sum", big, ((0,),)),
                 ("reduce_prod", big, ((0,),))])


def test_bitwise_reductions_on_integers() -> None:
    x = np.array([[6, 3, 7], [12, 10, 9]], np.int32)
    check_cases([("reduce_and", x, ((1,),)), ("reduce_or", x, ((1,),)),
                 ("reduce_and", x.astype(np.uint8), ((0,),))])


@pytest.mark.parametrize("op, args", [("reduce_sum", ((0,),)), ("reduce_max", ((0,),)), ("cumsum", ()),
                                      ("cummin", ()), ("argmax", (0, np.int32))])
def test_weak_type(op: str, args: tuple[Any, ...]) -> None:
    """Reductions keep a weak operand's weak type; argmax's indices are never weak."""

    def make(module: Any) -> Any:
        return lambda: getattr(module, op)(module.broadcast_in_dim(2.5, (3,), ()), *args)

    check_against_jax(make(lax), make(jax.lax))


def test_jitted_ir_carries_the_attributes() -> None:
    x, b = np.ones((2, 3), np.float32), np.ones((2, 3), bool)
    text = mlax.jit(lambda x, b: (lax.argmin(x, 1, np.int8), lax.cumprod(x, 0, True),
                                  lax.reduce_or(b, (1, 0)))).lower(x, b).as_text("mlax", debug_info=False)
    assert '"mlax.argmin"(%arg0) {axis = 1 : i64, index_dtype = i8}' in text
    assert '"mlax.cumprod"(%arg0) {axis = 0 : i64, reverse = 1 : i64}' in text
    assert "{dimensions = array<i64: 1, 0>} : (tensor<2x3xi1>) -> tensor<i1>" in text


ERRORS = [
    (lambda: lax.reduce_sum(np.ones(3, bool), (0,)), TypeError, r"mlax\.reduce_sum: .*numeric.*bool"),
    (lambda: lax.reduce_prod(np.ones(3, bool), ()), TypeError, r"mlax\.reduce_prod: .*numeric"),
    (lambda: lax.reduce_and(np.ones(3, np.float32), (0,)), TypeError,
     r"mlax\.reduce_and: .*integer or boolean.*float32"),
    (lambda: lax.reduce_or(np.ones(3, BF16), (0,)), TypeError, r"mlax\.reduce_or: .*integer or boolean"),
    (lambda: lax.reduce_max(np.ones((2, 3)), (2,)), ValueError,
     r"mlax\.reduce_max: .*out of range for rank 2"),
    (lambda: lax.reduce_min(np.ones((2, 3)), (-1,)), ValueError, r"mlax\.reduce_min: .*\(-1,\) out of range"),
    (lambda: lax.reduce_sum(np.ones((2, 3)), (1, 1)), ValueError, r"mlax\.reduce_sum: .*repeat"),
    (lambda: lax.argmax(np.ones((0, 3)), 0), ValueError, r"mlax\.argmax: axis 0 .* is empty"),
    (lambda: lax.argmin(np.ones((2, 3)), 2), ValueError, r"mlax\.argmin: axis 2 out of range for rank 2"),
    (lambda: lax.argmax(np.float32(1), 0), ValueError, r"mlax\.argmax: axis 0 out of range for rank 0"),
    (lambda: lax.argmax(np.ones(3), 0, np.float32), TypeError,
     r"mlax\.argmax: index_dtype must be an integer"),
    (lambda: lax.argmin(np.ones(3), 0, np.bool_), TypeError, r"mlax\.argmin: index_dtype .* got bool"),
    (lambda: lax.cumsum(np.ones(3, bool)), TypeError, r"mlax\.cumsum: .*numeric.*bool"),
    (lambda: lax.cummax(np.ones((2, 3)), 2), ValueError, r"mlax\.cummax: axis 2 out of range"),
    (lambda: lax.cumprod(np.ones((2, 3)), -1), ValueError, r"mlax\.cumprod: axis -1 out of range"),
    (lambda: lax.cummin(np.float32(2.0)), ValueError, r"mlax\.cummin: axis 0 out of range for rank 0"),
    (lambda: bind("cumsum", np.ones(3, np.float32), axis=0, reverse=2), ValueError,
     r"mlax\.cumsum: reverse must be 0 or 1, got 2"),
    (lambda: bind("reduce_sum", np.ones(3, np.float32)), TypeError, r"mlax\.reduce_sum: missing attribute"),
]


@pytest.mark.parametrize("fn, error, match", ERRORS)
def test_errors(fn: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        fn()


def test_errors_under_jit_name_the_op() -> None:
    with pytest.raises(ValueError, match=r"mlax\.argmax: axis 3 out of range"):
        mlax.jit(lambda x: lax.argmax(x, 3))(np.ones((2, 3), np.float32))
