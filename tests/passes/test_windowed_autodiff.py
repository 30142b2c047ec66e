"""Autodiff rules of the windowed ops, without the driver: JVPs against jax.jvp and float64
central differences on random problems (groups, dilations, padding incl. negative, permuted
dimension numbers), only transposable ops on the tangent path; the transpose rules of
conv_general_dilated (lhs and rhs) and reduce_window_sum by the dot-product identity."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from mlir import ir

from mlax.backends.interpreter import run_function
from tests.dialect.test_windowed import jax_conv, jax_reduce_window, random_conv, random_window
from tests.oracle import assert_same
from tests.passes.test_autodiff_jvp_rules import check_linearity, finite_difference, jax_jvp, jvp_module
from tests.passes.test_autodiff_transpose_rules import Case, check_adjoint

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


@pytest.fixture(autouse=True)
def _mlax_context(context: ir.Context) -> None:
    """Every test builds IR in the fresh context of tests/passes/conftest.py."""


def _jvp(op: str, attrs: dict[str, Any], args: list[np.ndarray], diff: list[int],
         tangents: list[np.ndarray]) -> np.ndarray:
    module, tangent_args = jvp_module(op, attrs, args, diff)
    check_linearity(module, tangent_args)
    return run_function(module, "f", [*args, *tangents])[1]


def _close(actual: np.ndarray, expected: np.ndarray, tol: float) -> None:
    """Same shape and dtype, and per element within ``tol`` relatively plus a tenth of it
    absolutely (operands and tangents are O(1): sums that cancel keep errors of that size)."""
    assert_same(np.asarray(actual), np.asarray(expected), rtol=tol, atol=tol / 10)


@pytest.mark.parametrize("diff", [[0], [1], [0, 1]], ids=["lhs", "rhs", "both"])
def test_conv_jvp(diff: list[int], rng: np.random.Generator) -> None:
    for _ in range(4):
        lhs_shape, rhs_shape, attrs = random_conv(rng)
        args = [rng.standard_normal(s).astype(F32) for s in (lhs_shape, rhs_shape)]
        tangents = [rng.standard_normal(args[i].shape).astype(F32) for i in diff]
        actual = _jvp("conv_general_dilated", attrs, args, diff, tangents)
        _close(actual, jax_jvp(lambda a, b, attrs=attrs: jax_conv(a, b, attrs), args, diff, tangents), 1e-4)
        wide = [a.astype(F64) for a in args]
        wide_tangents = [t.astype(F64) for t in tangents]
        _close(_jvp("conv_general_dilated", attrs, wide, diff, wide_tangents),
               finite_difference("conv_general_dilated", attrs, wide, diff, wide_tangents), 1e-6)


def _distinct(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Values without ties (a permutation of spaced numbers), so window maxima are unique."""
    n = int(np.prod(shape, dtype=np.int64))
    return (rng.permutation(n).reshape(shape) * 0.25 - n / 8).astype(dtype)


@pytest.mark.parametrize("kind", ["sum", "max", "min"])
def test_reduce_window_jvp(kind: str, rng: np.random.Generator) -> None:
    for _ in range(6):
        shape, attrs = random_window(rng)
        x = _distinct(rng, shape, F32)
        t = rng.standard_normal(shape).astype(F32)
        op = f"reduce_window_{kind}"
        actual = _jvp(op, attrs, [x], [0], [t])
        _close(actual, jax_jvp(lambda v, attrs=attrs: jax_reduce_window(kind, v, attrs), [x], [0], [t]), 1e-5)
        with np.errstate(invalid="ignore"):  # windows of padding only: -inf - -inf
            numeric = finite_difference(op, attrs, [x.astype(F64)], [0], [t.astype(F64)], h=1e-3)
        exact = _jvp(op, attrs, [x.astype(F64)], [0], [t.astype(F64)])
        _close(np.where(np.isnan(numeric), 0, exact), np.nan_to_num(numeric), 1e-6)


def test_reduce_window_max_ties_take_the_first() -> None:
    """The first of tied maxima takes the tangent (jax's select_and_scatter_add); padding
    holds -inf, so it never wins over a number, and a window of padding only gets 0."""
    x = np.array([1.0, 3.0, 3.0, 2.0], F32)
    attrs = {"window_dimensions": (2,), "window_strides": (1,), "padding": (2, 0), "base_dilation": (1,),
             "window_dilation": (1,)}
    t = np.array([1.0, 2.0, 4.0, 8.0], F32)
    np.testing.assert_array_equal(_jvp("reduce_window_max", attrs, [x], [0], [t]), [0.0, 1.0, 2.0, 2.0, 4.0])


def test_integer_outputs_have_no_tangent() -> None:
    attrs = {"window_dimensions": (2,), "window_strides": (1,), "padding": (0, 0), "base_dilation": (1,),
             "window_dilation": (1,)}
    module, _ = jvp_module("reduce_window_max", attrs, [np.arange(3, dtype=np.int32)], [0])
    assert "mlax.compare" not in str(module)


# --- transposes ----------------------------------------------------------------------------------


@pytest.mark.usefixtures("x64")
@pytest.mark.parametrize("side", [0, 1], ids=["lhs", "rhs"])
def test_conv_transpose(side: int, rng: np.random.Generator) -> None:
    for _ in range(6):
        lhs, rhs, attrs = random_conv(rng)
        operands = [rng.standard_normal(s) for s in (lhs, rhs)]
        check_adjoint(Case("conv_general_dilated", operands, (side == 0, side == 1), attrs), rng)


@pytest.mark.usefixtures("x64")
@pytest.mark.parametrize(("lhs", "rhs", "attrs"), [
    ((2, 6, 7), (4, 3, 3), {"feature_group_count": 2, "window_strides": (2,), "padding": (3, -1)}),
    ((4, 3, 7), (6, 3, 2), {"batch_group_count": 2, "lhs_dilation": (3,), "rhs_dilation": (2,)}),
    ((1, 2, 9), (2, 2, 4), {"window_strides": (3,), "padding": (0, 0)}),  # trailing input never read
])
def test_conv_transpose_groups(lhs: tuple, rhs: tuple, attrs: dict[str, Any],
                               rng: np.random.Generator) -> None:
    full = {"window_strides": (1,), "padding": (0, 0), "lhs_dilation": (1,), "rhs_dilation": (1,),
            "lhs_spec": (0, 1, 2), "rhs_spec": (0, 1, 2), "out_spec": (0, 1, 2), "feature_group_count": 1,
            "batch_group_count": 1, **attrs}
    for side in (0, 1):
        operands = [rng.standard_normal(s) for s in (lhs, rhs)]
        check_adjoint(Case("conv_general_dilated", operands, (side == 0, side == 1), full), rng)


@pytest.mark.usefixtures("x64")
def test_reduce_window_sum_transpose(rng: np.random.Generator) -> None:
    for _ in range(10):
        shape, attrs = random_window(rng)
        check_adjoint(Case("reduce_window_sum", [rng.standard_normal(shape)], (True,), attrs), rng)

