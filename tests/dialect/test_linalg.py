"""dot_general, dot and batch_matmul against jax.lax (eager and jitted)."""

from __future__ import annotations

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
DTYPES = (np.float32, np.float16, BF16, np.int32, np.int8, np.uint32, np.bool_)
# The reference sums in another order than XLA; halves accumulate in f32 on both sides.
TOL = {np.dtype(np.float32): (1e-5, 1e-4), np.dtype(np.float16): (2e-3, 2e-2),
       np.dtype(BF16): (1.6e-2, 0.2)}


def _tol(dtype: Any) -> dict[str, float]:
    rtol, atol = TOL.get(np.dtype(dtype), (0.0, 0.0))
    return {"rtol": rtol, "atol": atol}


def random_dot_problem(rng: np.random.Generator) -> tuple[tuple[int, ...], tuple[int, ...], Any]:
    """Random shapes and valid dimension numbers: batch and contracting dims at random positions.

    Each side has up to 4 dims; sizes are 0..5 (0 rarely), so the dims come in
    non-canonical order and zero-size contractions and batches occur.
    """
    n_batch, n_contract = (int(n) for n in rng.integers(0, 3, size=2))
    max_free = min(2, 4 - n_batch - n_contract)
    n_lfree, n_rfree = (int(n) for n in rng.integers(0, max_free + 1, size=2))

    def size() -> int:
        return int(rng.choice([0, 1, 2, 3, 5], p=[0.05, 0.2, 0.25, 0.3, 0.2]))

    batch_sizes = [size() for _ in range(n_batch)]
    contract_sizes = [size() for _ in range(n_contract)]

    def side(n_free: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        roles = ["b"] * n_batch + ["c"] * n_contract + ["f"] * n_free
        order = rng.permutation(len(roles))  # axis order[i] plays role i
        shape = [0] * len(roles)
        sizes = batch_sizes + contract_sizes + [size() for _ in range(n_free)]
        for role_index, axis in enumerate(order):
            shape[axis] = sizes[role_index]
        batch = tuple(int(order[i]) for i in range(n_batch))
        contract = tuple(int(order[n_batch + i]) for i in range(n_contract))
        return tuple(shape), batch, contract

    lhs_shape, lb, lc = side(n_lfree)
    rhs_shape, rb, rc = side(n_rfree)
    return lhs_shape, rhs_shape, ((lc, rc), (lb, rb))


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    if np.dtype(dtype) == np.uint32:  # large enough that products and sums wrap
        return rng.integers(0, 2**32, size=shape, dtype=np.uint64).astype(np.uint32)
    return random_array(rng, shape, dtype)


def check_dots(cases: list[tuple[np.ndarray, np.ndarray, Any, dict[str, Any]]], **tol: float) -> None:
    """Check every ``dot_general(lhs, rhs, dims, **kw)`` against JAX in one jitted JAX program."""

    def run(module: Any) -> Any:
        def fn(*xs: Any) -> list[Any]:
            pairs = zip(xs[::2], xs[1::2], cases, strict=True)
            return [module.dot_general(a, b, dims, **kw) for a, b, (_, _, dims, kw) in pairs]

        return fn

    args = [x for lhs, rhs, _, _ in cases for x in (lhs, rhs)]
    check_against_jax(run(lax), jax.jit(run(jax.lax)), *args, **tol)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_dot_general_random_dimension_numbers(dtype: Any, rng: np.random.Generator) -> None:
    cases = []
    for _ in range(8):
        lhs_shape, rhs_shape, dims = random_dot_problem(rng)
        cases.append((_values(rng, lhs_shape, dtype), _values(rng, rhs_shape, dtype), dims, {}))
    check_dots(cases, **_tol(dtype))


def test_random_problems_cover_the_interesting_cases() -> None:
    """The generator makes batch and contracting dims out of order and on both sides."""
    rng = np.random.default_rng(0)
    problems = [random_dot_problem(rng)[2] for _ in range(200)]
    assert any(len(lb) == 2 and list(lb) != sorted(lb) for (_, _), (lb, _) in problems)
    assert any(len(lc) == 2 and lb and min(lc) < min(lb) for (lc, _), (lb, _) in problems)


# (operand dtype, preferred_element_type): widening, int -> float, bool counts, float narrowing,
# and float -> int (a float contraction then a convert).
PREFERRED = [(np.int8, np.int32), (np.int8, np.float32), (np.uint8, np.int32), (np.bool_, np.int32),
             (np.bool_, np.float32), (np.float16, np.float32), (BF16, np.float32), (np.float32, np.float16),
             (np.float32, BF16), (np.int32, np.float32), (np.int32, np.uint32), (np.float32, np.int32),
             (np.float16, np.int8), (np.float32, np.float32)]


@pytest.mark.parametrize("dtype, preferred", PREFERRED, ids=lambda d: np.dtype(d).name)
def test_preferred_element_type(dtype: Any, preferred: Any, rng: np.random.Generator) -> None:
    cases = []
    for _ in range(3):
        lhs_shape, rhs_shape, dims = random_dot_problem(rng)
        cases.append((random_array(rng, lhs_shape, dtype), random_array(rng, rhs_shape, dtype), dims,
                      {"preferred_element_type": preferred}))
    check_dots(cases, **_tol(preferred))


@pytest.mark.parametrize("lhs_dtype, rhs_dtype", [(np.float32, np.int32), (np.int8, np.int32),
                                                  (np.float16, np.float32), (np.uint8, np.int32),
                                                  (np.bool_, np.float16), (np.float16, BF16)],
                         ids=lambda d: np.dtype(d).name)
def test_mixed_operand_dtypes_promote_as_xla(lhs_dtype: Any, rhs_dtype: Any,
                                             rng: np.random.Generator) -> None:
    lhs = random_array(rng, (3, 4), lhs_dtype)
    rhs = random_array(rng, (4, 2), rhs_dtype)
    result = np.dtype(jax.lax.dot_general(lhs, rhs, (((1,), (0,)), ((), ()))).dtype)
    check_dots([(lhs, rhs, (((1,), (0,)), ((), ())), {})], **_tol(result))


def test_integer_overflow_wraps() -> None:
    lhs = np.full((2, 3), 2**20, np.int32)
    rhs = np.array([[2**12, 3], [2**11, -7], [1, 2**30]], np.int32)
    small = np.array([[100, 100, -100]], np.int8)
    check_dots([(lhs, rhs, (((1,), (0,)), ((), ())), {}), (small, small.T, (((1,), (0,)), ((), ())), {})])


def test_weak_type() -> None:
    """The result is weak only when both operands are (as jax)."""

    def make(module: Any, rhs_scalar: Any) -> Any:
        def fn() -> Any:
            lhs = module.broadcast_in_dim(2.5, (2, 3), ())
            rhs = module.broadcast_in_dim(rhs_scalar, (3,), ())
            return module.dot_general(lhs, rhs, (((1,), (0,)), ((), ())))

        return fn

    check_against_jax(make(lax, 1.5), make(jax.lax, 1.5))
    check_against_jax(make(lax, np.float32(1.5)), make(jax.lax, np.float32(1.5)))


def test_result_layout_is_batch_then_lhs_free_then_rhs_free() -> None:
    lhs, rhs = np.ones((2, 5, 3), np.float32), np.ones((5, 3, 2, 7), np.float32)
    out = lax.dot_general(lhs, rhs, (((2,), (1,)), ((1, 0), (0, 2))))
    assert out.shape == (5, 2, 7)
    text = mlax.jit(lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((1, 0), (0, 2))))).lower(
        lhs, rhs).as_text("mlax", debug_info=False)
    assert ("{lhs_batch_dimensions = array<i64: 1, 0>, lhs_contracting_dimensions = array<i64: 2>, "
            "result_dtype = f32, rhs_batch_dimensions = array<i64: 0, 2>, "
            "rhs_contracting_dimensions = array<i64: 1>}") in text


@pytest.mark.parametrize("lhs_shape, rhs_shape", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
                                                  ((2, 3), (3, 4)), ((1, 0), (0, 4))])
def test_dot(lhs_shape: tuple[int, ...], rhs_shape: tuple[int, ...], rng: np.random.Generator) -> None:
    lhs = random_array(rng, lhs_shape, np.float32)
    rhs = random_array(rng, rhs_shape, np.float32)
    check_against_jax(lax.dot, jax.lax.dot, lhs, rhs, rtol=1e-5, atol=1e-5)
    check_against_jax(lambda a, b: lax.dot(a, b, preferred_element_type=np.float16),
                      lambda a, b: jax.lax.dot(a, b, preferred_element_type=np.float16), lhs, rhs,
                      **_tol(np.float16))


def test_dot_with_dimension_numbers(rng: np.random.Generator) -> None:
    lhs, rhs = random_array(rng, (4, 2, 3), np.int8), random_array(rng, (3, 4), np.int8)
    dims = (((2,), (0,)), ((0,), (1,)))
    check_against_jax(lambda a, b: lax.dot(a, b, dimension_numbers=dims, preferred_element_type=np.int32),
                      lambda a, b: jax.lax.dot(a, b, dimension_numbers=dims, preferred_element_type=np.int32),
                      lhs, rhs)


@pytest.mark.parametrize("lhs_shape, rhs_shape", [((5, 2, 3), (5, 3, 4)), ((2, 3, 1, 4), (2, 3, 4, 2)),
                                                  ((2, 3), (3, 4)), ((0, 2, 3), (0, 3, 1))])
def test_batch_matmul(lhs_shape: tuple[int, ...], rhs_shape: tuple[int, ...],
                      rng: np.random.Generator) -> None:
    lhs = random_array(rng, lhs_shape, np.float32)
    rhs = random_array(rng, rhs_shape, np.float32)
    check_against_jax(lax.batch_matmul, jax.lax.batch_matmul, lhs, rhs, rtol=1e-5, atol=1e-5)


F32 = np.ones((2, 3), np.float32)
MM = (((1,), (0,)), ((), ()))


def _bind(lhs: np.ndarray, rhs: np.ndarray, lc: tuple[int, ...] = (1,), rc: tuple[int, ...] = (0,),
          lb: tuple[int, ...] = (), rb: tuple[int, ...] = (), result_dtype: Any = None) -> Any:
    """The op itself, bypassing the wrapper's promotion."""
    return bind("dot_general", lhs, rhs, lhs_contracting_dimensions=lc, rhs_contracting_dimensions=rc,
                lhs_batch_dimensions=lb, rhs_batch_dimensions=rb,
                result_dtype=lhs.dtype if result_dtype is None else np.dtype(result_dtype))


ERRORS = [
    (lambda: lax.dot_general(F32, F32, MM), ValueError,
     r"mlax\.dot_general: contracting dimension sizes differ: lhs \(3,\) .* rhs \(2,\)"),
    (lambda: lax.dot_general(F32, F32.T, (((1,), (0, 1)), ((), ()))), ValueError,
     r"lhs_contracting_dimensions \(1,\) and rhs_contracting_dimensions \(0, 1\) differ in length"),
    (lambda: lax.dot_general(F32, F32.T, (((1,), (0,)), ((0,), ()))), ValueError,
     r"lhs_batch_dimensions \(0,\) and rhs_batch_dimensions \(\) differ in length"),
    (lambda: lax.dot_general(F32, np.ones((3, 3), np.float32), (((1,), (0,)), ((0,), (1,)))), ValueError,
     r"batch dimension sizes differ: lhs \(2,\)"),
    (lambda: lax.dot_general(F32, F32.T, (((2,), (0,)), ((), ()))), ValueError,
     r"lhs_contracting_dimensions \(2,\) out of range for lhs rank 2"),
    (lambda: lax.dot_general(F32, F32.T, (((1,), (-1,)), ((), ()))), ValueError,
     r"rhs_contracting_dimensions \(-1,\) out of range for rhs rank 2"),
    (lambda: lax.dot_general(F32, F32, (((1, 1), (1, 1)), ((), ()))), ValueError,
     r"lhs_contracting_dimensions \(1, 1\) repeat a dimension"),
    (lambda: lax.dot_general(F32, F32, (((1,), (1,)), ((0, 0), (0, 0)))), ValueError,
     r"lhs_batch_dimensions \(0, 0\) repeat a dimension"),
    (lambda: lax.dot_general(F32, F32, (((0,), (0,)), ((0,), (1,)))), ValueError,
     r"lhs_contracting_dimensions \(0,\) and lhs_batch_dimensions \(0,\) overlap"),
    (lambda: _bind(F32, F32.T.astype(np.float16)), TypeError,
     r"mlax\.dot_general: lhs and rhs must have the same dtype, got float32 and float16"),
    (lambda: _bind(F32, F32.T, result_dtype=np.int32), TypeError,
     r"result_dtype int32 must be floating for float32 operands"),
    (lambda: _bind(F32.astype(np.int32), F32.T.astype(np.int32), result_dtype=np.bool_), TypeError,
     r"result_dtype bool needs bool operands, got int32"),
    (lambda: lax.dot_general(F32.astype(np.int32), F32.T.astype(np.int32), MM,
                             preferred_element_type=np.int8), TypeError,
     r"mlax\.lax\.dot_general: preferred_element_type int8 must not be narrower than .* int32"),
    (lambda: lax.dot_general(F32, F32.T, ((1,), (0,))), TypeError,
     r"mlax\.lax\.dot_general: dimension_numbers must be \(\(lhs_contracting, rhs_contracting\)"),
    (lambda: lax.dot_general(F32, F32.T, (((1,), (0,)), ((), ("a",)))), TypeError,
     r"dimension_numbers must be"),
    (lambda: lax.dot(np.ones((2, 2, 3)), np.ones((3, 4))), ValueError,
     r"mlax\.lax\.dot: without dimension_numbers .* shapes \(2, 2, 3\) and \(3, 4\)"),
    (lambda: lax.dot(np.ones((2, 3)), np.ones((4, 4))), ValueError, r"inner sizes agree"),
    (lambda: lax.dot(np.float32(2.0), np.ones(3)), ValueError, r"mlax\.lax\.dot: .*vectors or matrices"),
    (lambda: lax.batch_matmul(np.ones((5, 2, 3)), np.ones((1, 5, 3, 4))), ValueError,
     r"mlax\.lax\.batch_matmul: operands must have the same rank >= 2"),
    (lambda: lax.batch_matmul(np.ones(3), np.ones(3)), ValueError, r"same rank >= 2"),
    (lambda: lax.batch_matmul(np.ones((5, 2, 3)), np.ones((4, 3, 4))), ValueError,
     r"batch dimension sizes differ"),
]


@pytest.mark.parametrize("fn, error, match", ERRORS)
def test_errors(fn: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        fn()


def test_errors_under_jit_name_the_op() -> None:
    with pytest.raises(ValueError, match=r"mlax\.dot_general: contracting dimension sizes differ"):
        mlax.jit(lambda a, b: lax.dot_general(a, b, MM))(F32, F32)
