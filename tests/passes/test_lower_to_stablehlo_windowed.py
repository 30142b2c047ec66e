"""mlax-lower-to-stablehlo on conv_general_dilated and reduce_window_*: random problems (strides,
padding incl. negative, dilations, feature and batch groups, permuted dimension numbers, 1-3
spatial dimensions), every dtype, run by XLA against the interpreter and against jax.

Tolerances: integer results and max/min windows are exact; float sum windows are exact against
jax and within `_RTOL` of the reference (XLA's CPU adds a window in the reference's order up
to rank 3, not always at rank 4); float convolutions differ from the reference in summation
order only (`_RTOL`, per dtype), and agree bit for bit with jax's own convolution on XLA.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

from mlax.dialect import TensorSpec, dtypes, get_op, infer
from tests.dialect.test_windowed import jax_conv, jax_reduce_window, random_conv, random_window
from tests.passes.stablehlo_harness import assert_bits_equal, check_against_interpreter, op_module, run_on_xla
from tests.passes.test_lower_to_linalg import _floats
from tests.passes.test_windowed_lowering import (
    _RTOL,
    NCHW,
    NHWC,
    PLAIN,
    WINDOW_EDGE_IDS,
    WINDOW_EDGES,
    _attrs,
    _random,
)

CONV = "conv_general_dilated"
ALL = [np.float32, np.float64, np.float16, dtypes.bfloat16, np.int32, np.int8, np.uint8]
pytestmark = pytest.mark.usefixtures("x64")  # f64 operands reach XLA unchanged


def _run(op: str, args: list[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    """``op`` on XLA, checked against the interpreter (float sums within `_RTOL`); XLA's result."""
    (out,) = infer(op, [TensorSpec(a.shape, a.dtype) for a in args], attrs)
    text = op_module(op, args, [(out.shape, out.dtype)], _attrs(attrs))
    sums = op in (CONV, "reduce_window_sum")
    check_against_interpreter(text, "f", args, _RTOL.get(np.dtype(args[0].dtype), 0.0) if sums else 0.0)
    return run_on_xla(text, "f", args)[0]


def _conv(lhs: np.ndarray, rhs: np.ndarray, attrs: dict[str, Any]) -> None:
    """Against the interpreter within the dtype's tolerance, and against jax on XLA: bit for bit
    where both compute in the operands' type (jax's halves compute their own way)."""
    dtype = np.dtype(lhs.dtype)
    got = _run(CONV, [lhs, rhs], attrs)
    want = np.asarray(jax.jit(lambda a, b: jax_conv(a, b, attrs))(lhs, rhs))
    halves = dtype in (np.dtype(np.float16), dtypes.bfloat16)
    assert_bits_equal(got, want, _RTOL[dtype] if halves else 0.0)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_conv_random(k: int, rng: np.random.Generator) -> None:
    for _ in range(4):
        lhs, rhs, attrs = random_conv(rng, k)
        _conv(_random(rng, np.float32, lhs), _random(rng, np.float32, rhs), attrs)


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: np.dtype(d).name)
def test_conv_dtypes(dtype: Any, rng: np.random.Generator) -> None:
    for _ in range(2):
        lhs, rhs, attrs = random_conv(rng, 2)
        _conv(_random(rng, dtype, lhs), _random(rng, dtype, rhs), attrs)


@pytest.mark.parametrize(("lhs", "rhs", "attrs"), [
    ((2, 3, 5, 4), (4, 3, 3, 2), {**PLAIN, **NCHW}),
    ((2, 5, 4, 3), (3, 2, 3, 4), {**PLAIN, **NHWC, "window_strides": (2, 1), "padding": (1, 1, 0, 2)}),
    ((2, 6, 5, 4), (6, 2, 2, 2), {**PLAIN, **NCHW, "feature_group_count": 3, "lhs_dilation": (2, 1)}),
    ((4, 3, 5, 4), (6, 3, 2, 2), {**PLAIN, **NCHW, "batch_group_count": 2, "rhs_dilation": (2, 2)}),
    ((1, 2, 4, 4), (2, 2, 3, 3), {**PLAIN, **NCHW, "padding": (-1, 1, 2, -2)}),
    ((0, 2, 4, 4), (2, 2, 3, 3), {**PLAIN, **NCHW}),  # empty batch
    ((2, 0, 4, 4), (2, 0, 3, 3), {**PLAIN, **NCHW}),  # no input features: zeros
    ((1, 1, 2, 2), (1, 1, 3, 3), {**PLAIN, **NCHW}),  # the window does not fit: empty
    ((3, 4), (5, 4), {**PLAIN, "window_strides": (), "padding": (), "lhs_dilation": (), "rhs_dilation": (),
                      "lhs_spec": (0, 1), "rhs_spec": (0, 1), "out_spec": (1, 0)}),  # no spatial dims
], ids=["nchw", "nhwc", "feature_groups", "batch_groups", "negative_padding", "empty_batch",
        "no_features", "no_fit", "rank2"])
def test_conv_layouts(lhs: tuple, rhs: tuple, attrs: dict[str, Any], rng: np.random.Generator) -> None:
    _conv(_random(rng, np.float32, lhs), _random(rng, np.float32, rhs), attrs)


def test_conv_nan_inf_in_padding(rng: np.random.Generator) -> None:
    """Padding holds zeros that enter the products: an infinite weight there gives NaN, in
    XLA as in the reference."""
    lhs, rhs = _floats(rng, np.float32, (1, 2, 4, 3)), _floats(rng, np.float32, (2, 2, 2, 2))
    _conv(lhs, rhs, {**PLAIN, **NCHW, "padding": (1, 0, 0, 1)})


def test_conv_inf_weight_over_lhs_dilation_holes() -> None:
    """The one known difference: the reference (the StableHLO spec) multiplies an infinite
    weight by the zeros in lhs-dilation holes (NaN); XLA's CPU backend skips the holes."""
    lhs = np.ones((1, 1, 3), np.float32)
    rhs = np.array([[[np.inf, 1.0]]], np.float32)
    attrs = {**PLAIN, "window_strides": (1,), "padding": (0, 0), "lhs_dilation": (2,), "rhs_dilation": (1,),
             "lhs_spec": (0, 1, 2), "rhs_spec": (0, 1, 2), "out_spec": (0, 1, 2)}
    (out,) = infer(CONV, [TensorSpec(lhs.shape, lhs.dtype), TensorSpec(rhs.shape, rhs.dtype)], attrs)
    got = run_on_xla(op_module(CONV, [lhs, rhs], [(out.shape, out.dtype)], _attrs(attrs)), "f", [lhs, rhs])[0]
    want = get_op(CONV).reference(lhs, rhs, **attrs)
    np.testing.assert_array_equal(want, [[[np.inf, np.nan, np.inf, np.nan]]])
    np.testing.assert_array_equal(got, [[[np.inf, 1.0, np.inf, 1.0]]])


def _window_values(rng: np.random.Generator, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    if np.dtype(dtype).kind == "f" or dtype == dtypes.bfloat16:  # NaN, infinities, signed zeros
        return _floats(rng, dtype, shape)
    return _random(rng, dtype, shape)


@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", [*ALL, np.bool_], ids=lambda d: np.dtype(d).name)
def test_reduce_window(kind: str, dtype: Any, rng: np.random.Generator) -> None:
    """Against the interpreter (float sums within `_RTOL`: the order of addition) and against
    jax, exactly but for half sums (jax accumulates those in halves, mlax in f32 as the
    reference)."""
    if kind == "sum" and dtype == np.bool_:
        return
    for _ in range(3):
        shape, attrs = random_window(rng)
        x = _window_values(rng, dtype, shape)
        got = _run(f"reduce_window_{kind}", [x], attrs)
        want = np.asarray(jax.jit(lambda x, attrs=attrs: jax_reduce_window(kind, x, attrs))(x))
        halves = np.dtype(dtype) in (np.dtype(np.float16), dtypes.bfloat16)
        assert_bits_equal(got, want, _RTOL[np.dtype(dtype)] if kind == "sum" and halves else 0.0)


@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_reduce_window_ranks(rank: int, rng: np.random.Generator) -> None:
    """Rank 4 too (where an f32 sum may differ from the reference by an ulp: XLA's order)."""
    for kind in ("sum", "max", "min"):
        shape, attrs = random_window(rng, rank)
        _run(f"reduce_window_{kind}", [_floats(rng, np.float32, shape)], attrs)


def test_reduce_window_signed_zeros() -> None:
    """max picks +0.0 and min -0.0 from a window holding both, whatever their order."""
    x = np.array([0.0, -0.0, 0.0, -0.0, 0.0], np.float32)
    attrs = {"window_dimensions": (2,), "window_strides": (1,), "padding": (0, 0), "base_dilation": (1,),
             "window_dilation": (1,)}
    assert list(np.signbit(_run("reduce_window_max", [x], attrs))) == [False] * 4
    assert list(np.signbit(_run("reduce_window_min", [x], attrs))) == [True] * 4


@pytest.mark.parametrize(("shape", "attrs"), WINDOW_EDGES, ids=WINDOW_EDGE_IDS)
def test_reduce_window_edges(shape: tuple, attrs: dict[str, Any], rng: np.random.Generator) -> None:
    for kind in ("sum", "max", "min"):
        _run(f"reduce_window_{kind}", [_floats(rng, np.float32, shape)], attrs)


def test_pooling_and_conv_program(rng: np.random.Generator) -> None:
    """Front-end max/sum pooling and a padded convolution on XLA, as the interpreter backend
    (bit for bit but for the convolution's summation order) and as jax."""
    from tests.passes.test_lower_to_stablehlo_control_flow import check_program

    x, w = _floats(rng, np.float32, (2, 3, 7, 6)), _random(rng, np.float32, (4, 3, 3, 2))

    def make(lax, np_):
        def f(x, w):
            pooled = lax.reduce_window(x, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 1), "SAME")
            summed = lax.reduce_window(x, 0.0, lax.add, (1, 1, 3, 1), (1, 1, 1, 1), "VALID")
            finite = np_.where(np_.isfinite(x), x, 0.0)
            conv = lax.conv_general_dilated(finite, w, (2, 1), "SAME", rhs_dilation=(1, 2))
            return pooled, summed, conv
        return f

    check_program(make, (x, w), rtol=_RTOL[np.dtype(np.float32)], exact=False)
