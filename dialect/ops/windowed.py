"""Windowed ops: conv_general_dilated and reduce_window_{sum,max,min}, as StableHLO defines them.

Both slide a window over the spatial dimensions of an operand that is first base-dilated
(`lhs_dilation` / `base_dilation - 1` holes between elements) and edge-padded (`padding`,
lo/hi pairs flattened as `(lo_0, hi_0, lo_1, hi_1, ...)`; negative padding crops), reading
every `window_strides`-th window and, inside a window, every `rhs_dilation` /
`window_dilation`-th element. Holes and padding hold 0 for convolutions (they take part in
the products, so an infinite weight meeting padding gives NaN, as the StableHLO spec and
XLA's CPU backend compute) and the monoid's identity for reduce_window.

Convolution dimension numbers are three permutations, as JAX's ConvDimensionNumbers:
`lhs_spec = (batch, feature, spatial...)`, `rhs_spec = (output feature, input feature,
spatial...)`, `out_spec = (batch, feature, spatial...)`, each listing dimension indices of
that operand (so NCHW/OIHW/NCHW is `(0, 1, 2, 3)` three times, NHWC/HWIO/NHWC is
`(0, 3, 1, 2)`, `(3, 2, 0, 1)`, `(0, 3, 1, 2)`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from mlax.dialect import dtypes
from mlax.dialect.ops.common import (
    DEFAULT_PRECISION,
    check_precision,
    compute_dtype,
    op_type_error,
    op_value_error,
)
from mlax.dialect.ops.reductions import MONOIDS
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec

CONV = "conv_general_dilated"


# --- shared window arithmetic -----------------------------------------------------------------


def dilated_size(n: int, dilation: int) -> int:
    """The size of ``n`` elements with ``dilation - 1`` holes between neighbours."""
    return 0 if n == 0 else (n - 1) * dilation + 1


def window_output_size(n: int, base_dilation: int, lo: int, hi: int, window: int, window_dilation: int,
                       stride: int) -> int:
    """How many windows fit in the dilated, padded dimension (0 if the window does not fit)."""
    padded = dilated_size(n, base_dilation) + lo + hi
    span = dilated_size(window, window_dilation)
    return (padded - span) // stride + 1 if padded >= span else 0


def _check_lengths(op: str, rank: int, dims: str, **values: Sequence[int]) -> None:
    for name, value in values.items():
        expected = 2 * rank if name == "padding" else rank
        if len(value) != expected:
            what = "2 x " if name == "padding" else ""
            raise op_value_error(op, f"{name} {tuple(value)} must have {what}{rank} entries (one "
                                     f"{'lo/hi pair' if what else 'entry'} per {dims})")
        if name != "padding" and any(v < 1 for v in value):
            raise op_value_error(op, f"{name} {tuple(value)} must be >= 1")


def _output_sizes(op: str, sizes: Sequence[int], windows: Sequence[int], strides: Sequence[int],
                  padding: Sequence[int], base: Sequence[int], window_dilation: Sequence[int],
                  what: str, dims: str) -> tuple[int, ...]:
    out = []
    for d, (n, k, s, b, w) in enumerate(zip(sizes, windows, strides, base, window_dilation, strict=True)):
        lo, hi = padding[2 * d], padding[2 * d + 1]
        if k < 1:
            raise op_value_error(op, f"{what} {tuple(windows)} must be >= 1")
        if dilated_size(n, b) + lo + hi < 0:
            raise op_value_error(op, f"padding ({lo}, {hi}) crops more than the {dilated_size(n, b)} "
                                     f"elements of {dims} {d}")
        out.append(window_output_size(n, b, lo, hi, k, w, s))
    return tuple(out)


def dilate_and_pad(x: np.ndarray, fill: object, padding: Sequence[int],
                   dilation: Sequence[int]) -> np.ndarray:
    """``x`` with ``dilation - 1`` holes between elements and lo/hi ``padding`` (negative crops)
    per dimension, holes and padding holding ``fill``."""
    lows, highs = padding[0::2], padding[1::2]
    grown = [dilated_size(n, d) + max(lo, 0) + max(hi, 0)
             for n, d, lo, hi in zip(x.shape, dilation, lows, highs, strict=True)]
    out = np.full(grown, fill, x.dtype)
    out[tuple(slice(max(lo, 0), max(lo, 0) + dilated_size(n, d), d)
              for n, d, lo in zip(x.shape, dilation, lows, strict=True))] = x
    crop = zip(grown, lows, highs, strict=True)
    return out[tuple(slice(max(-lo, 0), g - max(-hi, 0)) for g, lo, hi in crop)]


def window_slice(offsets: Sequence[int], dilation: Sequence[int], strides: Sequence[int],
                 sizes: Sequence[int]) -> tuple[slice, ...]:
    """The elements at window position ``offsets`` of every output element."""
    return tuple(slice(o * d, o * d + (n - 1) * s + 1 if n else o * d, s)
                 for o, d, s, n in zip(offsets, dilation, strides, sizes, strict=True))


# --- conv_general_dilated -------------------------------------------------------------------------


def _check_spec(name: str, spec: Sequence[int], rank: int) -> None:
    if sorted(spec) != list(range(rank)):
        raise op_value_error(CONV, f"{name} {tuple(spec)} must be a permutation of 0 .. {rank - 1}")


def _conv_infer(lhs: TensorSpec, rhs: TensorSpec, *, window_strides: Sequence[int], padding: Sequence[int],
                lhs_dilation: Sequence[int], rhs_dilation: Sequence[int], lhs_spec: Sequence[int],
                rhs_spec: Sequence[int], out_spec: Sequence[int], feature_group_count: int,
                batch_group_count: int, precision: Sequence[str] = DEFAULT_PRECISION) -> TensorSpec:
    check_precision(CONV, precision)
    if lhs.dtype != rhs.dtype:
        raise op_type_error(CONV, f"lhs and rhs must have the same dtype, got {lhs.dtype} and {rhs.dtype}")
    if dtypes.is_bool(lhs.dtype):
        raise op_type_error(CONV, "operands must have a numeric element type, got bool")
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise op_value_error(CONV, f"lhs and rhs must have one rank >= 2, got shapes {lhs.shape} and "
                                   f"{rhs.shape}")
    rank = lhs.ndim
    for name, spec in (("lhs_spec", lhs_spec), ("rhs_spec", rhs_spec), ("out_spec", out_spec)):
        _check_spec(name, spec, rank)
    _check_lengths(CONV, rank - 2, "spatial dimension", window_strides=window_strides, padding=padding,
                   lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation)
    fg, bg = int(feature_group_count), int(batch_group_count)
    if fg < 1 or bg < 1 or (fg > 1 and bg > 1):
        raise op_value_error(CONV, f"feature_group_count {fg} and batch_group_count {bg} must be >= 1, "
                                   "and at most one of them > 1")
    batch, features = lhs.shape[lhs_spec[0]], lhs.shape[lhs_spec[1]]
    out_features, in_features = rhs.shape[rhs_spec[0]], rhs.shape[rhs_spec[1]]
    if features != in_features * fg:
        raise op_value_error(CONV, f"lhs feature size {features} must be rhs input feature size "
                                   f"{in_features} x feature_group_count {fg}")
    if out_features % fg or out_features % bg:
        raise op_value_error(CONV, f"rhs output feature size {out_features} must be a multiple of "
                                   f"feature_group_count {fg} and batch_group_count {bg}")
    if batch % bg:
        raise op_value_error(CONV, f"lhs batch size {batch} must be a multiple of batch_group_count {bg}")
    spatial = _output_sizes(CONV, [lhs.shape[d] for d in lhs_spec[2:]], [rhs.shape[d] for d in rhs_spec[2:]],
                            window_strides, padding, lhs_dilation, rhs_dilation, "rhs spatial sizes",
                            "spatial dimension")
    shape = [0] * rank
    for d, size in zip(out_spec, (batch // bg, out_features, *spatial), strict=True):
        shape[d] = size
    return TensorSpec(tuple(shape), lhs.dtype)


def _conv(lhs: np.ndarray, rhs: np.ndarray, *, window_strides: Sequence[int], padding: Sequence[int],
          lhs_dilation: Sequence[int], rhs_dilation: Sequence[int], lhs_spec: Sequence[int],
          rhs_spec: Sequence[int], out_spec: Sequence[int], feature_group_count: int,
          batch_group_count: int, precision: Sequence[str] = DEFAULT_PRECISION) -> np.ndarray:
    del precision  # the reference is exact whatever the precision asks
    work = compute_dtype(lhs.dtype)
    x = np.transpose(lhs, tuple(lhs_spec)).astype(work)  # (N, C, spatial...)
    w = np.transpose(rhs, tuple(rhs_spec)).astype(work)  # (O, I, window...)
    x = dilate_and_pad(x, 0, (0, 0, 0, 0, *padding), (1, 1, *lhs_dilation))
    fg, bg = int(feature_group_count), int(batch_group_count)
    groups = fg * bg
    n, c, *sizes = x.shape
    o, i, *window = w.shape
    spatial = [window_output_size(s, 1, 0, 0, k, d, st)
               for s, k, d, st in zip(sizes, window, rhs_dilation, window_strides, strict=True)]
    if fg > 1:  # (groups, batch, in features, spatial...)
        x = np.swapaxes(x.reshape(n, fg, i, *sizes), 0, 1)
    else:
        x = x.reshape(bg, n // bg, c, *sizes)
    w = w.reshape(groups, o // groups, i, *window)
    out = np.zeros((n // bg, groups, o // groups, math.prod(spatial)), work)
    for offsets in itertools.product(*(range(k) for k in window)):
        patch = x[(Ellipsis, *window_slice(offsets, rhs_dilation, window_strides, spatial))]
        patch = patch.reshape(*patch.shape[:3], math.prod(spatial))
        out += np.einsum("gnip,goi->ngop", patch, w[(Ellipsis, *offsets)])
    out = out.reshape(n // bg, o, *spatial)
    return np.transpose(out, tuple(np.argsort(out_spec))).astype(lhs.dtype)


define_op(
    CONV, "(lhs: T, rhs: U) -> (result: V)",
    complex=True,
    attributes={"window_strides": "i64s", "padding": "i64s", "lhs_dilation": "i64s", "rhs_dilation": "i64s",
                "lhs_spec": "i64s", "rhs_spec": "i64s", "out_spec": "i64s", "feature_group_count": "i64",
                "batch_group_count": "i64", "precision": "strs"},
    defaults={"precision": DEFAULT_PRECISION},
    infer=_conv_infer, reference=_conv, weak_type="all",
    summary="N-d convolution with strides, padding, lhs/rhs dilation and feature/batch groups.",
    description="""
`lhs` and `rhs` have one numeric (not boolean) element type and one rank `2 + k`;
`lhs_spec`, `rhs_spec` and `out_spec` are permutations naming their (batch, feature,
spatial...) / (output feature, input feature, spatial...) / (batch, feature, spatial...)
dimensions, as JAX's ConvDimensionNumbers (NCHW/OIHW/NCHW: `(0, 1, 2, 3)` three times;
NHWC/HWIO/NHWC: `(0, 3, 1, 2)`, `(3, 2, 0, 1)`, `(0, 3, 1, 2)`). `window_strides`,
`lhs_dilation`, `rhs_dilation` have `k` entries >= 1, `padding` has `2k` (lo/hi per
spatial dimension, negative crops) and rhs spatial sizes are >= 1. With
`G = feature_group_count`, the lhs features are `G` groups of the rhs input feature size
and output feature `f` of group `f / (O/G)` sees only its group's input features; with
`B = batch_group_count`, the lhs batch is `B` consecutive groups of `N/B` and output
feature `f` sees only batch group `f / (O/B)` (the result batch is `N/B`). At most one of
`G`, `B` exceeds 1. Spatial result size:
`floor((dilated + lo + hi - dilated_window) / stride) + 1`, or 0 if the window does not fit.
Holes and padding are zeros that enter the products (the StableHLO spec; XLA's CPU backend
may skip lhs-dilation holes, which differs only for non-finite weights). Integers wrap;
f16/bf16 accumulate in f32 and round once; float accumulation order is
implementation-defined. `precision` (optional, absent means `["DEFAULT", "DEFAULT"]`) is
jax's `lax.Precision` of (lhs, rhs), as on `mlax.dot_general`.
""",
)


# --- reduce_window_{sum,max,min} ----------------------------------------------------------------------


def _combine(kind: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The monoid on two arrays; max/min order `-0.0 < +0.0` (NumPy keeps either zero)."""
    out = MONOIDS[kind].ufunc(a, b)
    if kind == "sum" or not dtypes.is_float(out.dtype):
        return out
    zeros = (a == 0) & (b == 0)
    pick = np.where(np.signbit(a) == (kind == "max"), b, a)  # max: +0 if any; min: -0 if any
    return np.where(zeros, pick, out)


def define_reduce_window(kind: str) -> None:
    """``reduce_window_<kind>(operand) {window ...}``: the monoid over every window."""
    name = f"reduce_window_{kind}"
    monoid = MONOIDS[kind]

    def infer(x: TensorSpec, *, window_dimensions: Sequence[int], window_strides: Sequence[int],
              padding: Sequence[int], base_dilation: Sequence[int],
              window_dilation: Sequence[int]) -> TensorSpec:
        if not monoid.accepts(x.dtype):
            raise op_type_error(name, f"operand must have {monoid.accepts_doc} element type, got {x.dtype}")
        _check_lengths(name, x.ndim, "dimension", window_dimensions=window_dimensions,
                       window_strides=window_strides, padding=padding, base_dilation=base_dilation,
                       window_dilation=window_dilation)
        shape = _output_sizes(name, x.shape, window_dimensions, window_strides, padding, base_dilation,
                              window_dilation, "window_dimensions", "dimension")
        return TensorSpec(shape, x.dtype)

    def reference(x: np.ndarray, *, window_dimensions: Sequence[int], window_strides: Sequence[int],
                  padding: Sequence[int], base_dilation: Sequence[int],
                  window_dilation: Sequence[int]) -> np.ndarray:
        work = compute_dtype(x.dtype)
        identity = np.asarray(monoid.identity(work)).astype(work)
        padded = dilate_and_pad(x.astype(work), identity, padding, base_dilation)
        shape = [window_output_size(n, 1, 0, 0, k, d, s) for n, k, d, s in
                 zip(padded.shape, window_dimensions, window_dilation, window_strides, strict=True)]
        out = np.full(shape, identity, work)
        for offsets in itertools.product(*(range(k) for k in window_dimensions)):
            out = _combine(kind, out, padded[window_slice(offsets, window_dilation, window_strides, shape)])
        return out.astype(x.dtype)

    define_op(
        name, "(operand: T) -> (result: U)",
        attributes={"window_dimensions": "i64s", "window_strides": "i64s", "padding": "i64s",
                    "base_dilation": "i64s", "window_dilation": "i64s"},
        infer=infer, reference=reference, weak_type="first", complex=True,
        summary=f"The {monoid.noun} over every (strided, dilated) window of the padded operand.",
        description=f"""
Operand element type: {monoid.accepts_doc}; the result has it too. One entry per dimension
in `window_dimensions`, `window_strides`, `base_dilation`, `window_dilation` (all >= 1) and
two (lo, hi; negative crops) in `padding`. Result size per dimension:
`floor((dilated + lo + hi - dilated_window) / stride) + 1`, or 0 if the window does not fit.
Holes and padding hold the identity, {monoid.identity_doc}, so they never change a result
(`jax.lax.reduce_window` with this monoid and that init value). {_NOTES[kind]}
""",
    )


_NOTES = {"sum": "Integers wrap; f16/bf16 accumulate in f32 and round once; the order of a float "
                 "accumulation is implementation-defined.",
          "max": "NaN propagates; `-0.0 < +0.0`; on booleans it is logical or.",
          "min": "NaN propagates; `-0.0 < +0.0`; on booleans it is logical and."}

for _kind in ("sum", "max", "min"):
    define_reduce_window(_kind)
