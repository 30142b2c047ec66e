"""mlax-lower-to-linalg on conv_general_dilated and reduce_window_*: the lowered IR, executed,
agrees with the interpreter on random problems (strides, padding incl. negative, dilations,
feature and batch groups, permuted dimension numbers, 1-3 spatial dims) and every dtype."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mlax.dialect import TensorSpec, dtypes, infer
from mlax.passes.lower_to_linalg import windowed
from tests.dialect.test_windowed import random_conv, random_window
from tests.passes.test_lower_to_linalg import _floats, _i64s, _ints, check

_RTOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-5, np.dtype(np.float16): 2e-3,
         dtypes.bfloat16: 2e-2}


def _attrs(attrs: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k} = {v} : i64" if isinstance(v, int) else f"{k} = {_i64s(v)}"
                           for k, v in attrs.items()) + "}"


def _random(rng: np.random.Generator, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        return _ints(rng, dtype, shape)
    return rng.normal(scale=2.0, size=shape).astype(dtype)


def _check(op: str, args: list[np.ndarray], attrs: dict[str, Any], rtol: float = 0.0) -> None:
    (out,) = infer(op, [TensorSpec(a.shape, a.dtype) for a in args], attrs)
    check(op, args, attrs=_attrs(attrs), result=(out.shape, out.dtype), rtol=rtol)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_conv_random(k: int, rng: np.random.Generator) -> None:
    for _ in range(3):
        lhs, rhs, attrs = random_conv(rng, k)
        _check("conv_general_dilated", [_random(rng, np.float32, lhs), _random(rng, np.float32, rhs)], attrs,
               _RTOL[np.dtype(np.float32)])


@pytest.mark.parametrize("dtype", [np.float64, np.float16, dtypes.bfloat16, np.int32, np.int8, np.uint8],
                         ids=lambda d: np.dtype(d).name)
def test_conv_dtypes(dtype: Any, rng: np.random.Generator) -> None:
    lhs, rhs, attrs = random_conv(rng, 2)
    _check("conv_general_dilated", [_random(rng, dtype, lhs), _random(rng, dtype, rhs)], attrs,
           _RTOL.get(np.dtype(dtype), 0.0))


NCHW = {"lhs_spec": (0, 1, 2, 3), "rhs_spec": (0, 1, 2, 3), "out_spec": (0, 1, 2, 3)}
NHWC = {"lhs_spec": (0, 3, 1, 2), "rhs_spec": (3, 2, 0, 1), "out_spec": (0, 3, 1, 2)}
PLAIN = {"window_strides": (1, 1), "padding": (0, 0, 0, 0), "lhs_dilation": (1, 1), "rhs_dilation": (1, 1),
         "feature_group_count": 1, "batch_group_count": 1}


@pytest.mark.parametrize(("lhs", "rhs", "attrs"), [
    ((2, 3, 5, 4), (4, 3, 3, 2), {**PLAIN, **NCHW}),
    ((2, 5, 4, 3), (3, 2, 3, 4), {**PLAIN, **NHWC, "window_strides": (2, 1), "padding": (1, 1, 0, 2)}),
    ((2, 6, 5, 4), (6, 2, 2, 2), {**PLAIN, **NCHW, "feature_group_count": 3, "lhs_dilation": (2, 1)}),
    ((4, 3, 5, 4), (6, 3, 2, 2), {**PLAIN, **NCHW, "batch_group_count": 2, "rhs_dilation": (2, 2)}),
    ((1, 2, 4, 4), (2, 2, 3, 3), {**PLAIN, **NCHW, "padding": (-1, 1, 2, -2)}),
    ((0, 2, 4, 4), (2, 2, 3, 3), {**PLAIN, **NCHW}),  # empty batch
    ((2, 0, 4, 4), (2, 0, 3, 3), {**PLAIN, **NCHW}),  # no input features: zeros
])
def test_conv_layouts(lhs: tuple, rhs: tuple, attrs: dict[str, Any], rng: np.random.Generator) -> None:
    _check("conv_general_dilated", [_random(rng, np.float32, lhs), _random(rng, np.float32, rhs)], attrs,
           _RTOL[np.dtype(np.float32)])


def test_conv_nan_inf(rng: np.random.Generator) -> None:
    """Padding and dilation holes are zeros that multiply (inf * 0 = NaN) in both."""
    lhs, rhs = _floats(rng, np.float32, (1, 2, 4, 3)), _floats(rng, np.float32, (2, 2, 2, 2))
    attrs = {**PLAIN, **NCHW, "padding": (1, 0, 0, 1), "lhs_dilation": (2, 1)}
    _check("conv_general_dilated", [lhs, rhs], attrs, _RTOL[np.dtype(np.float32)])


@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, dtypes.bfloat16, np.int32, np.int8, np.uint8,
                                   np.bool_], ids=lambda d: np.dtype(d).name)
def test_reduce_window(kind: str, dtype: Any, rng: np.random.Generator) -> None:
    if kind == "sum" and dtype == np.bool_:
        return
    for _ in range(2):
        shape, attrs = random_window(rng)
        x = _floats(rng, dtype, shape) if np.dtype(dtype).kind == "f" or dtype == dtypes.bfloat16 \
            else _random(rng, dtype, shape)
        _check(f"reduce_window_{kind}", [x], attrs, _RTOL.get(np.dtype(dtype), 0.0) if kind == "sum" else 0.0)


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_reduce_window_ranks(rank: int, rng: np.random.Generator) -> None:
    for kind in ("sum", "max"):
        shape, attrs = random_window(rng, rank)
        rtol = 1e-5 if kind == "sum" else 0.0
        _check(f"reduce_window_{kind}", [_floats(rng, np.float32, shape)], attrs, rtol)


EMPTY_WINDOW = {"window_strides": (), "padding": (), "base_dilation": (), "window_dilation": (),
                "window_dimensions": ()}
# reduce_window at its edges (shared with the StableHLO lowering's tests).
WINDOW_EDGES = [
    ((), EMPTY_WINDOW),  # rank 0: the operand
    ((0, 3), {"window_dimensions": (1, 2), "window_strides": (1, 1), "padding": (0, 0, 0, 0),
              "base_dilation": (1, 1), "window_dilation": (1, 1)}),  # empty operand and result
    ((2, 0), {"window_dimensions": (1, 1), "window_strides": (1, 1), "padding": (0, 0, 1, 1),
              "base_dilation": (1, 2), "window_dilation": (1, 1)}),  # padding only: the identity
    ((3,), {"window_dimensions": (2,), "window_strides": (1,), "padding": (-1, -1), "base_dilation": (1,),
            "window_dilation": (1,)}),  # cropped to one element: the window does not fit
    ((6,), {"window_dimensions": (2,), "window_strides": (3,), "padding": (-1, 2), "base_dilation": (2,),
            "window_dilation": (3,)}),  # crop, holes and wide windows together
]
WINDOW_EDGE_IDS = ["rank0", "empty", "padding_only", "cropped", "mixed"]


@pytest.mark.parametrize(("shape", "attrs"), WINDOW_EDGES, ids=WINDOW_EDGE_IDS)
def test_reduce_window_edges(shape: tuple, attrs: dict[str, Any], rng: np.random.Generator) -> None:
    for kind in ("sum", "max", "min"):
        _check(f"reduce_window_{kind}", [_floats(rng, np.float32, shape)], attrs)


def test_conv_window_does_not_fit(rng: np.random.Generator) -> None:
    attrs = {"window_strides": (1,), "padding": (0, 0), "lhs_dilation": (1,), "rhs_dilation": (1,),
             "lhs_spec": (0, 1, 2), "rhs_spec": (0, 1, 2), "out_spec": (0, 1, 2), "feature_group_count": 1,
             "batch_group_count": 1}
    _check("conv_general_dilated", [_random(rng, np.float32, (1, 1, 2)), _random(rng, np.float32, (1, 1, 3))],
           attrs)


def test_conv_over_the_im2col_limit_loops_directly(monkeypatch: pytest.MonkeyPatch,
                                                   rng: np.random.Generator) -> None:
    """Patches larger than IM2COL_LIMIT are not materialized: the direct generic computes the same."""
    monkeypatch.setattr(windowed, "IM2COL_LIMIT", 0)
    for k in (1, 2):
        lhs, rhs, attrs = random_conv(rng, k)
        _check("conv_general_dilated", [_random(rng, np.float32, lhs), _random(rng, np.float32, rhs)], attrs,
               _RTOL[np.dtype(np.float32)])
    grouped = [_random(rng, np.float32, (2, 6, 5, 4)), _random(rng, np.float32, (6, 2, 2, 2))]
    attrs = {**PLAIN, **NCHW, "feature_group_count": 3, "lhs_dilation": (2, 1)}
    _check("conv_general_dilated", grouped, attrs, _RTOL[np.dtype(np.float32)])
