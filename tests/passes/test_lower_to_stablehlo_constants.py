"""`lower_to_stablehlo.common.constant`: values repeated along a dimension are a constant of
the values and a broadcast_in_dim, one value a scalar constant and a broadcast_in_dim (as jax
writes it: XLA would build a literal of a splat's full size); never an array of the result's
size."""

from __future__ import annotations

import numpy as np
from mlir import ir

from mlax.dialect.context import get_context
from mlax.passes.lower_to_stablehlo import common

HUGE = 1 << 40  # elements: building an array of this many fails at once


def _printed(values: np.ndarray | int, shape: list[int]) -> str:
    with get_context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            common.constant(values, ir.RankedTensorType.get(shape, ir.IntegerType.get_signless(32)))
        return str(module)


def test_one_value_is_a_scalar_and_a_broadcast() -> None:
    text = _printed(np.full(3, 7, np.int32), [HUGE, 3])
    assert "dense<7> : tensor<i32>" in text
    assert (f'"stablehlo.broadcast_in_dim"(%0) {{broadcast_dimensions = array<i64>}} : '
            f"(tensor<i32>) -> tensor<{HUGE}x3xi32>") in text


def test_one_element_stays_one_constant() -> None:
    text = _printed(np.int32(7), [1, 1])
    assert "dense<7> : tensor<1x1xi32>" in text and "broadcast_in_dim" not in text


def test_repeated_values_are_a_constant_and_a_broadcast() -> None:
    text = _printed(np.arange(3, dtype=np.int32), [HUGE, 3])
    assert "dense<[0, 1, 2]> : tensor<3xi32>" in text
    assert (f'"stablehlo.broadcast_in_dim"(%0) {{broadcast_dimensions = array<i64: 1>}} : '
            f"(tensor<3xi32>) -> tensor<{HUGE}x3xi32>") in text


def test_size_one_dimensions_are_left_out_of_the_constant() -> None:
    text = _printed(np.arange(3, dtype=np.int32).reshape(3, 1), [3, HUGE])
    assert "dense<[0, 1, 2]> : tensor<3xi32>" in text
    assert "broadcast_dimensions = array<i64: 0>" in text


def test_values_of_the_full_shape_are_one_constant() -> None:
    text = _printed(np.arange(6, dtype=np.int32).reshape(2, 3), [2, 3])
    assert "dense<[[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi32>" in text
    assert "broadcast_in_dim" not in text
