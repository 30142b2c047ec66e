"""conv_general_dilated and reduce_window_{sum,max,min}: inference and the NumPy reference
against jax.lax on random problems (strides, padding incl. negative, dilations, groups,
permuted dimension numbers, 1-3 spatial dims), every accepted dtype, and the errors.

The random problem generators here are shared by the pass and front-end tests."""

from __future__ import annotations

from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest
from jax import lax as jlax

from mlax.dialect import TensorSpec, get_op, infer

BF16 = np.dtype(ml_dtypes.bfloat16)
Attrs = dict[str, Any]


def _ints(rng: np.random.Generator, low: int, high: int, n: int) -> tuple[int, ...]:
    return tuple(int(x) for x in rng.integers(low, high + 1, size=n))


def random_conv(rng: np.random.Generator, k: int | None = None, groups: bool = True,
                negative_padding: bool = True) -> tuple[tuple[int, ...], tuple[int, ...], Attrs]:
    """(lhs shape, rhs shape, attributes) of a valid convolution with random dimension numbers,
    strides, padding, dilations and (feature or batch) groups; sizes stay small."""
    while True:
        k = int(rng.integers(1, 4)) if k is None else k
        fg = bg = 1
        if groups and rng.random() < 0.3:
            fg = int(rng.integers(2, 4))
        elif groups and rng.random() < 0.3:
            bg = int(rng.integers(2, 4))
        n, i, o = bg * int(rng.integers(0, 3)), int(rng.integers(1, 3)), fg * bg * int(rng.integers(1, 3))
        sizes, window = _ints(rng, 1, 6 if k < 3 else 4, k), _ints(rng, 1, 3, k)
        specs = [tuple(int(x) for x in rng.permutation(k + 2)) for _ in range(3)]
        low = -1 if negative_padding else 0
        attrs = {"window_strides": _ints(rng, 1, 2, k), "padding": _ints(rng, low, 2, 2 * k),
                 "lhs_dilation": _ints(rng, 1, 2, k), "rhs_dilation": _ints(rng, 1, 2, k),
                 "lhs_spec": specs[0], "rhs_spec": specs[1], "out_spec": specs[2],
                 "feature_group_count": fg, "batch_group_count": bg}
        lhs, rhs = [0] * (k + 2), [0] * (k + 2)
        for d, size in zip(specs[0], (n, i * fg, *sizes), strict=True):
            lhs[d] = size
        for d, size in zip(specs[1], (o, i, *window), strict=True):
            rhs[d] = size
        try:
            infer("conv_general_dilated", [TensorSpec(tuple(s), np.float32) for s in (lhs, rhs)], attrs)
        except ValueError:  # padding cropped too much
            continue
        return tuple(lhs), tuple(rhs), attrs


def random_window(rng: np.random.Generator, rank: int | None = None,
                  negative_padding: bool = True) -> tuple[tuple[int, ...], Attrs]:
    """(operand shape, attributes) of a valid reduce_window."""
    while True:
        r = int(rng.integers(0, 4)) if rank is None else rank
        sizes = rng.choice([0, 1, 2, 3, 4, 5], p=[0.05, 0.15, 0.2, 0.2, 0.2, 0.2], size=r)
        shape = tuple(int(x) for x in sizes)
        attrs = {"window_dimensions": _ints(rng, 1, 3, r), "window_strides": _ints(rng, 1, 2, r),
                 "padding": _ints(rng, -1 if negative_padding else 0, 2, 2 * r),
                 "base_dilation": _ints(rng, 1, 2, r), "window_dilation": _ints(rng, 1, 2, r)}
        try:
            infer("reduce_window_sum", [TensorSpec(shape, np.float32)], attrs)
        except ValueError:
            continue
        return shape, attrs


def jax_conv(lhs: Any, rhs: Any, attrs: Attrs, module: Any = jlax) -> Any:
    """``module.conv_general_dilated`` (jax.lax or mlax.lax) with the op's attributes."""
    a = attrs
    return module.conv_general_dilated(
        lhs, rhs, a["window_strides"], list(zip(a["padding"][0::2], a["padding"][1::2], strict=True)),
        a["lhs_dilation"], a["rhs_dilation"],
        jlax.ConvDimensionNumbers(a["lhs_spec"], a["rhs_spec"], a["out_spec"]), a["feature_group_count"],
        a["batch_group_count"])


MONOID = {"sum": (jlax.add, 0), "max": (jlax.max, -np.inf), "min": (jlax.min, np.inf)}


def init_value(kind: str, dtype: np.dtype) -> np.ndarray:
    """The identity of ``kind`` in ``dtype`` (as jax.lax.reduce_window's init value)."""
    value = MONOID[kind][1]
    if dtype == np.bool_:
        return np.asarray(kind == "min")
    if dtype.kind in "iu" and np.isinf(value):
        info = np.iinfo(dtype)
        return np.asarray(info.min if value < 0 else info.max, dtype)
    return np.asarray(value, dtype)


def jax_reduce_window(kind: str, x: Any, attrs: Attrs, module: Any = jlax) -> Any:
    a = attrs
    computation = getattr(module, kind if kind != "sum" else "add")
    return module.reduce_window(x, init_value(kind, np.dtype(x.dtype)), computation,
                                a["window_dimensions"], a["window_strides"],
                                list(zip(a["padding"][0::2], a["padding"][1::2], strict=True)),
                                a["base_dilation"], a["window_dilation"])


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), size=shape, endpoint=True).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


TOL = {np.dtype(np.float32): 1e-4, np.dtype(np.float16): 1e-2, BF16: 6e-2}


def _assert_matches(got: np.ndarray, want: Any, dtype: np.dtype) -> None:
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    tol = TOL.get(dtype)
    if tol is None:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16, np.int32, np.int8, np.uint8],
                         ids=lambda d: np.dtype(d).name)
def test_conv_reference_matches_jax(dtype: Any, rng: np.random.Generator) -> None:
    """XLA's integer convolutions wrap like the reference (int8 too)."""
    dtype = np.dtype(dtype)
    problems = [random_conv(rng) for _ in range(12)]
    args = [(values(rng, ls, dtype), values(rng, rs, dtype)) for ls, rs, _ in problems]
    want = jax.jit(lambda xs: [jax_conv(lhs, rhs, a)
                               for (lhs, rhs), (_, _, a) in zip(xs, problems, strict=True)])(args)
    for (lhs, rhs), (_, _, attrs), expected in zip(args, problems, want, strict=True):
        spec = infer("conv_general_dilated", [TensorSpec(v.shape, dtype) for v in (lhs, rhs)], attrs)[0]
        got = get_op("conv_general_dilated").reference(lhs, rhs, **attrs)
        assert spec.shape == got.shape
        _assert_matches(got, expected, dtype)


@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16, np.int32, np.int8, np.uint8, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_reduce_window_reference_matches_jax(kind: str, dtype: Any, rng: np.random.Generator) -> None:
    dtype = np.dtype(dtype)
    if kind == "sum" and dtype == np.bool_:
        return
    problems = [random_window(rng) for _ in range(12)]
    xs = [values(rng, shape, dtype) for shape, _ in problems]
    if dtype.kind == "f" or dtype == BF16:  # NaN, infinities and signed zeros
        for x in xs:
            x.reshape(-1)[:4] = np.array([np.nan, np.inf, -0.0, 0.0])[:x.size]
    want = jax.jit(lambda xs: [jax_reduce_window(kind, x, a)
                               for x, (_, a) in zip(xs, problems, strict=True)])(xs)
    for x, (_, attrs), expected in zip(xs, problems, want, strict=True):
        got = get_op(f"reduce_window_{kind}").reference(x, **attrs)
        _assert_matches(got, expected, dtype)
        if kind != "sum" and dtype.kind == "f":
            zeros = np.asarray(expected) == 0
            np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(np.asarray(expected)[zeros]))


def test_zero_padding_enters_the_products() -> None:
    """The StableHLO spec (and XLA's CPU backend): 0 * inf at a padded position is NaN."""
    lhs, rhs = np.ones((1, 1, 3), np.float32), np.array([[[np.inf, 1, 1]]], np.float32)
    attrs = {"window_strides": (1,), "padding": (1, 1), "lhs_dilation": (1,), "rhs_dilation": (1,),
             "lhs_spec": (0, 1, 2), "rhs_spec": (0, 1, 2), "out_spec": (0, 1, 2),
             "feature_group_count": 1, "batch_group_count": 1}
    out = get_op("conv_general_dilated").reference(lhs, rhs, **attrs)
    np.testing.assert_array_equal(out, np.asarray(jax_conv(lhs, rhs, attrs)))


F = TensorSpec((2, 3, 5), np.float32)
W = TensorSpec((4, 3, 2), np.float32)
CONV_OK = {"window_strides": (1,), "padding": (0, 0), "lhs_dilation": (1,), "rhs_dilation": (1,),
           "lhs_spec": (0, 1, 2), "rhs_spec": (0, 1, 2), "out_spec": (0, 1, 2), "feature_group_count": 1,
           "batch_group_count": 1}
WINDOW_OK = {"window_dimensions": (1, 2, 2), "window_strides": (1, 1, 1), "padding": (0, 0) * 3,
             "base_dilation": (1, 1, 1), "window_dilation": (1, 1, 1)}

CONV_ERRORS = [
    ([F, TensorSpec((4, 3, 2), np.float16)], {}, TypeError, "lhs and rhs must have the same dtype"),
    ([TensorSpec((2, 3, 5), np.bool_)] * 2, {}, TypeError, "numeric element type, got bool"),
    ([F, TensorSpec((4, 3), np.float32)], {}, ValueError, "one rank >= 2"),
    ([F, W], {"lhs_spec": (0, 1, 1)}, ValueError, r"lhs_spec \(0, 1, 1\) must be a permutation of 0 .. 2"),
    ([F, W], {"window_strides": (1, 1)}, ValueError, r"window_strides \(1, 1\) must have 1 entries"),
    ([F, W], {"padding": (0,)}, ValueError, r"padding \(0,\) must have 2 x 1 entries"),
    ([F, W], {"rhs_dilation": (0,)}, ValueError, r"rhs_dilation \(0,\) must be >= 1"),
    ([F, W], {"feature_group_count": 3, "batch_group_count": 2}, ValueError, "at most one of them"),
    ([F, W], {"feature_group_count": 2}, ValueError, "lhs feature size 3 must be rhs input feature size 3 x"),
    ([F, TensorSpec((4, 1, 2), np.float32)], {"feature_group_count": 3}, ValueError,
     "rhs output feature size 4 must be a multiple of feature_group_count 3"),
    ([F, TensorSpec((3, 3, 2), np.float32)], {"batch_group_count": 3}, ValueError,
     "lhs batch size 2 must be a multiple of batch_group_count 3"),
    ([F, TensorSpec((4, 3, 0), np.float32)], {}, ValueError, r"rhs spatial sizes \(0,\) must be >= 1"),
    ([F, W], {"padding": (-3, -3)}, ValueError, r"padding \(-3, -3\) crops more than the 5 elements"),
]


@pytest.mark.parametrize(("specs", "attrs", "error", "match"), CONV_ERRORS)
def test_conv_errors(specs: list[TensorSpec], attrs: Attrs, error: type, match: str) -> None:
    with pytest.raises(error, match=r"mlax\.conv_general_dilated: .*" + match):
        infer("conv_general_dilated", specs, {**CONV_OK, **attrs})


WINDOW_ERRORS = [
    ("sum", TensorSpec((2, 3, 5), np.bool_), {}, TypeError,
     "operand must have numeric element type, got bool"),
    ("max", F, {"window_dimensions": (1, 2)}, ValueError, r"window_dimensions \(1, 2\) must have 3 entries"),
    ("min", F, {"window_dimensions": (1, 0, 1)}, ValueError, r"window_dimensions \(1, 0, 1\) must be >= 1"),
    ("sum", F, {"base_dilation": (1, 0, 1)}, ValueError, r"base_dilation \(1, 0, 1\) must be >= 1"),
    ("sum", F, {"padding": (0, 0, 0, 0, -6, 0)}, ValueError, "crops more than the 5 elements of dimension 2"),
]


@pytest.mark.parametrize(("kind", "spec", "attrs", "error", "match"), WINDOW_ERRORS)
def test_reduce_window_errors(kind: str, spec: TensorSpec, attrs: Attrs, error: type, match: str) -> None:
    with pytest.raises(error, match=rf"mlax\.reduce_window_{kind}: .*" + match):
        infer(f"reduce_window_{kind}", [spec], {**WINDOW_OK, **attrs})
