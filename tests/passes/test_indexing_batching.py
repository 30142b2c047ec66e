"""Batch rules of gather and the scatters (every batched/unbatched pattern, random dimension
numbers and modes) and of dynamic_slice / dynamic_update_slice with batched start indices:
the batched function equals the op per example, stacked."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir

from tests.passes.indexing_cases import SCATTERS, random_case
from tests.passes.test_batching_rules import F32, I8, I32, U8, check, patterns, random_values

MODES = ["clip", "fill", "promise_in_bounds"]


def _values(rng: np.random.Generator, case_shapes: list[tuple], batched: list[bool], size: int,
            dtypes: list[np.dtype], fixed: dict[int, np.ndarray]) -> list[np.ndarray]:
    """Random operands; the indices (``fixed``) are stacked per example when batched."""
    values = []
    for i, (shape, dtype, b) in enumerate(zip(case_shapes, dtypes, batched, strict=True)):
        if i in fixed:
            one = fixed[i]
            values.append(np.stack([np.roll(one, k) for k in range(size)]) if b else one)
        else:
            values.append(random_values(rng, (size, *shape) if b else shape, dtype))
    return values


@pytest.mark.parametrize("seed", range(8))
def test_gather(context: ir.Context, seed: int) -> None:
    rng = np.random.default_rng(seed)
    case = random_case(rng, MODES[seed % 3], index_dtype=[np.int32, np.uint8][seed % 2])
    operands = [(case.shape, F32), (case.indices.shape, case.indices.dtype)]
    for batched in patterns(2):
        size = [1, 3][seed % 2]
        values = _values(rng, [s for s, _ in operands], batched, size, [F32, case.indices.dtype],
                         {1: case.indices})
        check("gather", case.gather, operands, batched, size, rng, values)


@pytest.mark.parametrize("name", SCATTERS)
@pytest.mark.parametrize("seed", range(3))
def test_scatter(context: ir.Context, seed: int, name: str) -> None:
    rng = np.random.default_rng(50 + seed)
    case = random_case(rng, MODES[seed % 3])
    operands = [(case.shape, F32), (case.indices.shape, case.indices.dtype), (case.result, F32)]
    for batched in patterns(3):
        values = _values(rng, [s for s, _ in operands], batched, 2, [F32, I32, F32], {1: case.indices})
        check(name, case.scatter(), operands, batched, 2, rng, values)


@pytest.mark.parametrize("index_type", [I32, I8, U8])
def test_dynamic_slice_batched_starts(context: ir.Context, index_type: np.dtype) -> None:
    rng = np.random.default_rng(1)
    operands = [((5, 3), F32), ((), index_type), ((), index_type)]
    for batched in ([True, True, False], [False, True, True], [True, True, True], [False, False, True]):
        values = _values(rng, [s for s, _ in operands], batched, 4, [F32, index_type, index_type], {})
        values[1:] = [np.asarray(rng.integers(-3 if index_type.kind == "i" else 0, 7, v.shape), index_type)
                      for v in values[1:]]
        check("dynamic_slice", {"slice_sizes": (2, 2)}, operands, batched, 4, rng, values)


def test_dynamic_update_slice_batched_starts(context: ir.Context) -> None:
    rng = np.random.default_rng(2)
    operands = [((5, 3), F32), ((2, 2), F32), ((), I32), ((), I32)]
    for batched in ([True, True, True, False], [False, False, False, True], [False, True, True, True]):
        values = _values(rng, [s for s, _ in operands], batched, 3, [F32, F32, I32, I32], {})
        values[2:] = [np.asarray(rng.integers(-3, 7, v.shape), np.int32) for v in values[2:]]
        check("dynamic_update_slice", {}, operands, batched, 3, rng, values)
