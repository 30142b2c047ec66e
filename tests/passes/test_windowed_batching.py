"""Batch rules of conv_general_dilated and reduce_window_*, without the driver: the batched op
equals the op per example, stacked (tests/passes/test_batching_rules.py's harness), for every
batched/unbatched pattern, feature and batch groups, batch sizes 0, 1 and 3."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from mlir import ir

from tests.dialect.test_windowed import random_conv, random_window
from tests.passes.test_batching_rules import check

F32 = np.dtype(np.float32)


@pytest.fixture(autouse=True)
def _mlax_context(context: ir.Context) -> None:
    """Every test builds IR in the fresh context of tests/passes/conftest.py."""


def _check_conv(attrs: dict[str, Any], shapes: list[tuple[int, ...]], batched: list[bool], size: int,
                rng: np.random.Generator) -> None:
    """Finite values: with the harness's NaN/inf mixed in most sums would be NaN."""
    values = [rng.standard_normal((size, *s) if b else s).astype(F32)
              for s, b in zip(shapes, batched, strict=True)]
    check("conv_general_dilated", attrs, [(s, F32) for s in shapes], batched, size, rng, values)


def _conv_attrs(**changes: Any) -> dict[str, Any]:
    return {"window_strides": (1,), "padding": (1, 0), "lhs_dilation": (1,), "rhs_dilation": (2,),
            "lhs_spec": (2, 0, 1), "rhs_spec": (1, 2, 0), "out_spec": (1, 2, 0), "feature_group_count": 1,
            "batch_group_count": 1, **changes}


@pytest.mark.parametrize("batched", [[True, False], [False, True], [True, True]], ids=["lhs", "rhs", "both"])
@pytest.mark.parametrize("size", [1, 3])
def test_conv_random(batched: list[bool], size: int, rng: np.random.Generator) -> None:
    for _ in range(4):
        lhs, rhs, attrs = random_conv(rng)
        _check_conv(attrs, [lhs, rhs], batched, size, rng)


# (lhs shape, rhs shape) in the layouts of _conv_attrs: lhs (C, W, N), rhs (W, O, I), out (W, O, N)
@pytest.mark.parametrize(("lhs", "rhs", "groups"), [
    ((6, 5, 2), (2, 4, 3), {"feature_group_count": 2}),
    ((3, 5, 4), (2, 6, 3), {"batch_group_count": 2}),
    ((3, 5, 6), (2, 6, 3), {"batch_group_count": 3}),
])
@pytest.mark.parametrize("batched", [[True, False], [False, True], [True, True]], ids=["lhs", "rhs", "both"])
def test_conv_groups(lhs: tuple, rhs: tuple, groups: dict[str, int], batched: list[bool],
                     rng: np.random.Generator) -> None:
    _check_conv(_conv_attrs(**groups), [lhs, rhs], batched, 3, rng)


@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("size", [1, 3])
def test_reduce_window(kind: str, size: int, rng: np.random.Generator) -> None:
    for dtype in (F32, np.dtype(np.int32)):
        shape, attrs = random_window(rng)
        check(f"reduce_window_{kind}", attrs, [(shape, dtype)], [True], size, rng)
