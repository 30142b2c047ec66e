"""mlax-lower-to-stablehlo on sort_permutation, apply_permutation and top_k, run by XLA and
compared bit for bit with the interpreter (stability, NaN of either sign, signed zeros, unsigned
and bool order, sizes 0 and 1, any dimension) and with jax (argsort, take_along_axis, top_k)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mlax.dialect import dtypes
from tests.passes.stablehlo_harness import assert_bits_equal, op_module, run_on_xla
from tests.passes.test_lower_to_linalg_scan import _tied
from tests.passes.test_lower_to_stablehlo_indexing import check_op

FLOATS = [np.float32, np.float64, np.float16, dtypes.bfloat16]
ALL = [*FLOATS, np.int32, np.int8, np.int64, np.uint8, np.uint16, np.uint32, np.bool_]
pytestmark = pytest.mark.usefixtures("x64")  # 64-bit keys reach XLA unchanged


def _values(rng: np.random.Generator, dtype: type, shape: tuple[int, ...]) -> np.ndarray:
    """Rows with repeated extremes (+-0, +-inf, NaN of both signs; INT_MIN/INT_MAX; unsigned
    values above the signed maximum)."""
    if np.dtype(dtype).kind == "u":
        info = np.iinfo(dtype)
        pool = np.array([0, 1, 2, info.max, info.max // 2, info.max // 2 + 1], dtype)
        return rng.choice(pool, size=shape)
    x = _tied(rng, dtype, shape, nan=0.15)
    if np.dtype(dtype).kind == "f" or dtype == dtypes.bfloat16:
        x[rng.random(shape) < 0.1] = -np.nan
    return x


def _sort(x: np.ndarray, dimension: int) -> np.ndarray:
    text = op_module("sort_permutation", [x], [(x.shape, np.int32)], f"{{dimension = {dimension} : i64}}")
    check_op("sort_permutation", [x], [(x.shape, np.int32)], f"{{dimension = {dimension} : i64}}")
    return run_on_xla(text, "f", [x])[0]


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: np.dtype(d).name)
def test_sort_dtypes(dtype: type, rng: np.random.Generator) -> None:
    """Also jax's stable argsort (the same order: NaNs last and tied, -0.0 == +0.0)."""
    x = _values(rng, dtype, (3, 29))
    got = _sort(x, 1)
    want = jax.jit(lambda x: jnp.argsort(x, axis=1, stable=True))(x)
    assert_bits_equal(got, np.asarray(want).astype(np.int32))


@pytest.mark.parametrize(("shape", "dimension"), [((1,), 0), ((0,), 0), ((2, 0), 1), ((0, 3), 1), ((7,), 0),
                                                  ((3, 5, 4), 1), ((6, 2), 0), ((4, 3, 5), 2), ((257,), 0)])
def test_sort_shapes(shape: tuple, dimension: int, rng: np.random.Generator) -> None:
    _sort(_values(rng, np.float32, shape), dimension)


def test_sort_signed_zeros_and_nans() -> None:
    """-0.0 and +0.0 tie (kept in order), as do NaNs of either sign and payload, which go last."""
    nan = np.float32(np.nan)
    payload = np.array([0x7FC00001], np.uint32).view(np.float32)[0]
    x = np.array([0.0, -0.0, -nan, 1.0, nan, -0.0, -np.inf, payload, 0.0, np.inf, -nan], np.float32)
    np.testing.assert_array_equal(_sort(x, 0), [6, 0, 1, 5, 8, 3, 9, 2, 4, 7, 10])


@pytest.mark.parametrize(("dtype", "shape", "dimension"), [
    (np.float32, (4, 6), 1), (np.bool_, (5, 3), 0), (np.uint16, (2, 3, 4), 2), (np.float16, (0, 3), 1),
    (dtypes.bfloat16, (7,), 0), (np.int64, (3, 2, 5), 0)])
def test_apply_permutation(dtype: type, shape: tuple, dimension: int, rng: np.random.Generator) -> None:
    """A permutation, and indices out of range (clamped), also against jax's take_along_axis
    (past the end only: jax counts negative indices from the end)."""
    x = _values(rng, dtype, shape)
    attrs = f"{{dimension = {dimension} : i64}}"
    permutation = np.argsort(rng.random(shape), axis=dimension).astype(np.int32)
    wild = rng.integers(-3, max(shape[dimension], 1) + 3, size=shape).astype(np.int32)
    for indices in (permutation, wild, np.abs(wild)):
        check_op("apply_permutation", [x, indices], attrs=attrs)
        got = run_on_xla(op_module("apply_permutation", [x, indices], [(x.shape, x.dtype)], attrs), "f",
                         [x, indices])[0]
        take = jax.jit(lambda x, i: jnp.take_along_axis(x, i, axis=dimension, mode="clip"))
        if (indices >= 0).all():
            assert_bits_equal(got, np.asarray(take(x, indices)))


def _top_k(x: np.ndarray, k: int) -> None:
    shape = (*x.shape[:-1], k)
    results = [(shape, x.dtype), (shape, np.int32)]
    check_op("top_k", [x], results, f"{{k = {k} : i64}}")
    if k and x.dtype != np.bool_:  # jax's top_k takes no booleans
        got = run_on_xla(op_module("top_k", [x], results, f"{{k = {k} : i64}}"), "f", [x])
        want = jax.jit(lambda x: jax.lax.top_k(x, k))(x)
        for a, b in zip(got, want, strict=True):
            assert_bits_equal(a, np.asarray(b))


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: np.dtype(d).name)
def test_top_k_dtypes(dtype: type, rng: np.random.Generator) -> None:
    """XLA's TopK order: NaN first (by bits), +0.0 before -0.0, -NaN last, ties lowest index first."""
    _top_k(_values(rng, dtype, (3, 17)), 6)


@pytest.mark.parametrize(("shape", "k"), [((5,), 5), ((1,), 1), ((2, 3, 7), 3), ((4, 6), 0), ((0, 3), 2),
                                          ((3,), 0), ((2, 300), 40)])
def test_top_k_shapes(shape: tuple, k: int, rng: np.random.Generator) -> None:
    _top_k(_values(rng, np.float32, shape), k)


def test_top_k_nan_payloads() -> None:
    """NaNs ordered by their bits: a larger positive payload first, negative NaNs after -inf."""
    bits = np.array([0x7FC00000, 0x7FC00005, 0xFFC00000, 0xFFC00007, 0x3F800000, 0xFF800000], np.uint32)
    _top_k(bits.view(np.float32), 6)


def test_sorting_program(rng: np.random.Generator) -> None:
    """Front-end sorts on XLA (sort, argsort, multi-operand lax.sort, top_k) bit for bit as the
    interpreter backend and as jax."""
    from tests.passes.test_lower_to_stablehlo_control_flow import check_program

    x, n = _values(rng, np.float32, (4, 9)), _values(rng, np.int32, (4, 9))

    def make(lax, np_):
        def f(x, n):
            return (np_.sort(x, axis=1), np_.argsort(x, axis=0, stable=True), lax.sort((n, x), num_keys=1),
                    lax.sort((x, n), dimension=0, num_keys=2), tuple(lax.top_k(x, 4)))  # jax: a list
        return f

    check_program(make, (x, n), rtol=0.0)


def test_sorting_an_array_is_one_sort_without_a_gather() -> None:
    """jnp.sort's program as jax writes it: the sorted keys are the sort's first result."""
    import mlax
    import mlax.numpy as mnp

    x = np.arange(12, dtype=np.float32)[::-1].reshape(3, 4)
    lowered = mlax.jit(lambda x: mnp.sort(x, axis=0), backend="xla").lower(x)
    text = lowered.as_text("stablehlo", debug_info=False)
    assert text.count('"stablehlo.sort"') == 1 and "gather" not in text
    lowered = mlax.jit(lambda x: mnp.argsort(x, axis=0), backend="xla").lower(x)
    assert "gather" not in lowered.as_text("stablehlo", debug_info=False)  # argsort: the permutation
    np.testing.assert_array_equal(np.asarray(lowered.compile()(x)), np.argsort(x, axis=0, kind="stable"))
