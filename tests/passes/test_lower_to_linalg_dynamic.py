"""mlax-lower-to-linalg on dynamic_slice and dynamic_update_slice: start indices of every
integer type (negative, past the end, above the signed maximum) clamp as the interpreter's."""

from __future__ import annotations

import numpy as np
import pytest

from tests.passes.test_lower_to_linalg import _i64s, _ints, check

INDEX_TYPES = [np.int8, np.int32, np.int64, np.uint8, np.uint32, np.uint64]
WINDOWS = [((5, 7), (2, 3)), ((4,), (4,)), ((), ()), ((0, 3), (0, 2)), ((3, 4), (0, 1)),
           ((6, 1, 3), (2, 1, 3)), ((9,), (1,))]


def _starts(rng: np.random.Generator, dtype: type, rank: int) -> list[np.ndarray]:
    """Per dimension: small (in range or just past it), negative (or huge unsigned), or extreme."""
    info = np.iinfo(dtype)
    choices = [0, 1, 2, 5, info.max, info.min, info.max // 2 + 1, -1 if info.min else 3]
    return [np.asarray(choices[i], dtype) for i in rng.integers(0, len(choices), size=rank)]


@pytest.mark.parametrize("index_type", INDEX_TYPES)
@pytest.mark.parametrize(("shape", "sizes"), WINDOWS)
def test_dynamic_slice(shape: tuple, sizes: tuple, index_type: type, rng: np.random.Generator) -> None:
    x = _ints(rng, np.int32, shape)
    check("dynamic_slice", [x, *_starts(rng, index_type, len(shape))],
          attrs=f"{{slice_sizes = {_i64s(sizes)}}}", result=(sizes, np.int32))


@pytest.mark.parametrize("index_type", INDEX_TYPES)
@pytest.mark.parametrize(("shape", "sizes"), WINDOWS)
def test_dynamic_update_slice(shape: tuple, sizes: tuple, index_type: type, rng: np.random.Generator) -> None:
    x, update = _ints(rng, np.uint16, shape), np.asarray(_ints(rng, np.uint16, sizes) + np.uint16(7))
    check("dynamic_update_slice", [x, update, *_starts(rng, index_type, len(shape))])


def test_float_operand(rng: np.random.Generator) -> None:
    x = rng.normal(size=(4, 6)).astype(np.float64)
    starts = [np.asarray(2, np.int32), np.asarray(-3, np.int32)]
    check("dynamic_slice", [x, *starts], attrs="{slice_sizes = array<i64: 2, 4>}",
          result=((2, 4), np.float64))
    check("dynamic_update_slice", [x, rng.normal(size=(3, 2)), *starts])
