"""mlax-lower-to-linalg on sort_permutation and apply_permutation: the merge sort, executed,
agrees bit for bit with the interpreter (stability, NaN, signed zeros, unsigned and bool
order, sizes 0 and 1, non-power-of-two rows, any dimension); top_k likewise (XLA's TopK
order: NaN first, +0.0 before -0.0, -NaN last, ties lowest index first)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from mlir import ir

from mlax.backends.interpreter import run_function
from mlax.dialect import dtypes, get_context
from tests.passes.test_lower_to_linalg import _as_boundary, _module, _tensor, check, execute_lowered
from tests.passes.test_lower_to_linalg_scan import _tied


def _sort(x: np.ndarray, dimension: int) -> None:
    check("sort_permutation", [x], attrs=f"{{dimension = {dimension} : i64}}", result=(x.shape, np.int32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, dtypes.bfloat16, np.int32, np.int8,
                                   np.bool_])
def test_sort_dtypes(dtype: type, rng: np.random.Generator) -> None:
    _sort(_tied(rng, dtype, (3, 13), nan=0.15), dimension=1)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.int64])
def test_sort_integers(dtype: type, rng: np.random.Generator) -> None:
    info = np.iinfo(dtype)
    pool = np.array([info.min, info.max, info.max // 2, info.max // 2 + 1, 0, 1, 2], dtype)
    _sort(rng.choice(pool, size=(2, 9)), dimension=0 if dtype == np.int64 else 1)


@pytest.mark.parametrize(("shape", "dimension"), [((1,), 0), ((0,), 0), ((2, 0), 1), ((0, 3), 1), ((7,), 0),
                                                  ((3, 5, 4), 1), ((6, 2), 0), ((33,), 0)])
def test_sort_shapes(shape: tuple, dimension: int, rng: np.random.Generator) -> None:
    _sort(_tied(rng, np.float32, shape, nan=0.1), dimension)


def test_sort_signed_zeros_and_nans() -> None:
    """-0.0 and +0.0 tie (kept in order), as do NaNs of either sign, which go last."""
    nan = np.float32(np.nan)
    x = np.array([0.0, -0.0, -nan, 1.0, nan, -0.0, -np.inf, 0.0, np.inf, -nan], np.float32)
    _sort(x, 0)


def test_large_sort(rng: np.random.Generator) -> None:
    """A 1e5-element row (17 merge passes) sorts quickly and exactly."""
    _sort(rng.integers(-1000, 1000, size=100_000).astype(np.int32), 0)


@pytest.mark.parametrize(("dtype", "shape", "dimension"), [
    (np.float32, (4, 6), 1), (np.bool_, (5, 3), 0), (np.uint16, (2, 3, 4), 2), (np.float16, (0, 3), 1)])
def test_apply_permutation(dtype: type, shape: tuple, dimension: int, rng: np.random.Generator) -> None:
    x = _tied(rng, np.int8 if dtype == np.uint16 else np.float32 if dtype != np.bool_ else dtype, shape)
    x = x.astype(dtype)
    indices = np.argsort(rng.random(shape), axis=dimension).astype(np.int32)
    check("apply_permutation", [x, indices], attrs=f"{{dimension = {dimension} : i64}}")


def _top_k(x: np.ndarray, k: int) -> None:
    """Both results of top_k, each returned by its own @f (the harness returns one tensor)."""
    shape = (*x.shape[:-1], k)
    for which, dtype in enumerate((x.dtype, np.dtype(np.int32))):
        text = _module("top_k", [x], shape, dtype, attrs=f"{{k = {k} : i64}}")
        text = re.sub(r"%r\b", f"%t#{which}", text).replace("%t#0 = ", "%t:2 = ", 1)
        text = text.replace("%t#1 = ", "%t:2 = ", 1)
        text = re.sub(r'(%t:2 = "mlax.top_k".*-> )(\S+)$',
                      lambda m: f"{m.group(1)}({_tensor(shape, x.dtype)}, {_tensor(shape, np.int32)})", text,
                      flags=re.M)
        with get_context():
            (expected,) = run_function(ir.Module.parse(text), "f", [_as_boundary(x)])
        actual = execute_lowered(text, [x], shape, dtype)
        expected = expected.astype(bool) if dtype == np.bool_ else expected
        assert actual.dtype == expected.dtype
        np.testing.assert_array_equal(*(np.ascontiguousarray(a).reshape(-1).view(np.uint8)
                                        for a in (actual, expected)))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, dtypes.bfloat16, np.float64, np.int8, np.uint16,
                                   np.bool_])
def test_top_k_dtypes(dtype: type, rng: np.random.Generator) -> None:
    x = _tied(rng, np.int8 if dtype == np.uint16 else dtype, (3, 10), nan=0.2).astype(dtype)
    if np.dtype(dtype).kind == "f":  # NaNs of both signs: TopK orders them by their bits
        x[rng.random(x.shape) < 0.1] = -np.nan
    _top_k(x, 4)


@pytest.mark.parametrize(("shape", "k"), [((5,), 5), ((1,), 1), ((2, 3, 7), 3), ((4, 6), 0), ((0, 3), 2),
                                          ((3,), 0)])
def test_top_k_shapes(shape: tuple, k: int, rng: np.random.Generator) -> None:
    _top_k(_tied(rng, np.float32, shape), k)
