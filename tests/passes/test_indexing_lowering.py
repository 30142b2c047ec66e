"""mlax-lower-to-linalg on gather and scatter: random dimension numbers, index types and modes,
executed through LLVM and compared bit for bit with the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from mlax.dialect import dtypes
from tests.passes.indexing_cases import SCATTERS, attr_text, random_case
from tests.passes.test_lower_to_linalg import _floats, _ints, check

INDEX_TYPES = [np.int32, np.uint8, np.int64, np.int8, np.uint32]
DTYPES = [np.float32, np.int16, np.uint8, np.float16, dtypes.bfloat16, np.bool_, np.float64]
MODES = ["clip", "fill", "promise_in_bounds"]


def _values(rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return _ints(rng, dtype, shape)
    return _floats(rng, dtype, shape)


@pytest.mark.parametrize("seed", range(14))
def test_gather(seed: int) -> None:
    rng = np.random.default_rng(seed)
    index_type = INDEX_TYPES[seed % len(INDEX_TYPES)]
    case = random_case(rng, MODES[seed % 3], index_dtype=index_type)
    dtype = DTYPES[seed % len(DTYPES)]
    x = _values(rng, dtype, case.shape)
    check("gather", [x, case.indices], attrs=attr_text(case.gather), result=(case.result, dtype))


@pytest.mark.parametrize("seed", range(15))
def test_scatter(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    name = SCATTERS[seed % len(SCATTERS)]
    case = random_case(rng, MODES[seed % 3], index_dtype=INDEX_TYPES[seed % len(INDEX_TYPES)])
    dtype = DTYPES[seed % len(DTYPES)]
    x, updates = _values(rng, dtype, case.shape), _values(rng, dtype, case.result)
    check(name, [x, case.indices, updates], attrs=attr_text(case.scatter()))


@pytest.mark.parametrize("name", SCATTERS)
def test_duplicates_combine_in_order(name: str) -> None:
    """Every update lands on one of two rows: the order of combination shows in f16 rounding."""
    rng = np.random.default_rng(7)
    x = _floats(rng, np.float16, (2, 3))
    indices = rng.integers(-1, 3, size=(9, 1)).astype(np.int32)
    updates = (rng.normal(size=(9, 3)) * 1000).astype(np.float16)
    attrs = dict(update_window_dims=(1,), inserted_window_dims=(0,), input_batching_dims=(),
                 scatter_indices_batching_dims=(), scatter_dims_to_operand_dims=(0,), index_vector_dim=1,
                 mode="fill")
    check(name, [x, indices, updates], attrs=attr_text(attrs))
