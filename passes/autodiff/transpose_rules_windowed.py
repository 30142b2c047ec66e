"""TRANSPOSE rules of the windowed ops that JVP rules emit linearly: conv_general_dilated (in lhs
or in rhs) and reduce_window_sum.

Both are JAX's (jax/_src/lax/convolution.py `_conv_general_dilated_transpose_lhs/rhs`,
windowed_reductions.py `_reduce_window_sum_transpose_rule`), written with mlax ops: the lhs
cotangent is a convolution of the cotangent with the spatially reversed kernel, strides and
lhs dilation swapped, input/output features swapped (groups moved between the two feature
dimensions); the rhs cotangent convolves the lhs with the cotangent (feature groups become
batch groups and back); reduce_window_sum's is the cotangent padded (interior = stride - 1)
and summed over windows strided by the base dilation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from mlir import ir

from mlax.dialect import read_attributes
from mlax.dialect.ops.windowed import dilated_size
from mlax.passes.autodiff.emit import Emitter, MaybeValue, spec
from mlax.passes.registry import PassFailure

Ints = Sequence[int]
# As transpose_rules._Rule: the single cotangent, the operands (None where linear).
Rule = Callable[[Emitter, ir.Operation, ir.Value, list[MaybeValue]], list[MaybeValue]]


def reshape_axis_out_of(e: Emitter, src: int, size: int, x: ir.Value) -> ir.Value:
    """Dimension ``src`` split into (size, rest)."""
    shape = list(spec(x).shape)
    shape[src:src + 1] = [size, shape[src] // size]
    return e("reshape", x, shape=tuple(shape))


def reshape_axis_into(e: Emitter, src: int, dst: int, x: ir.Value) -> ir.Value:
    """Dimension ``src`` merged into ``dst`` (numbered without ``src``), as its major part."""
    shape = spec(x).shape
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new = [n for i, n in enumerate(shape) if i != src]
    new[dst] *= shape[src]
    if perm != sorted(perm):
        x = e("transpose", x, permutation=tuple(perm))
    return e("reshape", x, shape=tuple(new))


def _spec_transpose(spec_: Sequence[int]) -> tuple[int, ...]:
    return (spec_[1], spec_[0], *spec_[2:])


def _sizes(shape: Sequence[int], dims: Sequence[int]) -> list[int]:
    return [shape[d] for d in dims]


def _lhs_padding(in_sizes: Ints, window: Ints, strides: Ints, out_sizes: Ints, padding: Ints,
                 lhs_dilation: Ints, rhs_dilation: Ints) -> tuple[int, ...]:
    """JAX's _conv_general_vjp_lhs_padding, flattened to (lo, hi, ...)."""
    pads = []
    for j, (n, k, s, o) in enumerate(zip(in_sizes, window, strides, out_sizes, strict=True)):
        before = dilated_size(k, rhs_dilation[j]) - padding[2 * j] - 1
        span = dilated_size(k, rhs_dilation[j])
        after = dilated_size(n, lhs_dilation[j]) + span - 1 - dilated_size(o, s) - before
        pads += [before, after]
    return tuple(pads)


def _rhs_padding(in_sizes: Ints, window: Ints, strides: Ints, out_sizes: Ints, padding: Ints,
                 lhs_dilation: Ints, rhs_dilation: Ints) -> tuple[int, ...]:
    """JAX's _conv_general_vjp_rhs_padding, flattened to (lo, hi, ...)."""
    pads = []
    for j, (n, k, s, o) in enumerate(zip(in_sizes, window, strides, out_sizes, strict=True)):
        lo = padding[2 * j]
        hi = dilated_size(o, s) - dilated_size(n, lhs_dilation[j]) + dilated_size(k, rhs_dilation[j]) - lo - 1
        pads += [lo, hi]
    return tuple(pads)


def _conv_lhs(e: Emitter, op: ir.Operation, ct: ir.Value, rhs: ir.Value) -> ir.Value:
    a = read_attributes(op)
    lhs_spec, rhs_spec, out_spec = a["lhs_spec"], a["rhs_spec"], a["out_spec"]
    fg, bg = a["feature_group_count"], a["batch_group_count"]
    lhs_shape, rhs_shape = spec(op.operands[0]).shape, spec(rhs).shape
    if 0 in spec(ct).shape:
        return e.zeros(op.operands[0].type)
    groups = fg * bg
    if groups > 1:  # the groups move from the output features to the input features
        rhs = reshape_axis_out_of(e, rhs_spec[0], groups, rhs)
        rhs = reshape_axis_into(e, rhs_spec[0], rhs_spec[1], rhs)
    padding = _lhs_padding(_sizes(lhs_shape, lhs_spec[2:]), _sizes(rhs_shape, rhs_spec[2:]),
                           a["window_strides"], _sizes(spec(ct).shape, out_spec[2:]), a["padding"],
                           a["lhs_dilation"], a["rhs_dilation"])
    out = e("conv_general_dilated", ct, e("rev", rhs, dimensions=tuple(rhs_spec[2:])),
            window_strides=a["lhs_dilation"], padding=padding, lhs_dilation=a["window_strides"],
            rhs_dilation=a["rhs_dilation"], lhs_spec=out_spec, rhs_spec=_spec_transpose(rhs_spec),
            out_spec=lhs_spec, feature_group_count=groups, batch_group_count=1, precision=a["precision"])
    if bg > 1:  # the result's features are (batch group, feature): back into the batch
        out = reshape_axis_out_of(e, lhs_spec[1], bg, out)
        out = reshape_axis_into(e, lhs_spec[1], lhs_spec[0], out)
    return out


def _conv_rhs(e: Emitter, op: ir.Operation, ct: ir.Value, lhs: ir.Value) -> ir.Value:
    a = read_attributes(op)
    lhs_spec, rhs_spec, out_spec = a["lhs_spec"], a["rhs_spec"], a["out_spec"]
    fg, bg = a["feature_group_count"], a["batch_group_count"]
    rhs_shape = spec(op.operands[1]).shape
    if 0 in spec(ct).shape:
        return e.zeros(op.operands[1].type)
    padding = _rhs_padding(_sizes(spec(lhs).shape, lhs_spec[2:]), _sizes(rhs_shape, rhs_spec[2:]),
                           a["window_strides"], _sizes(spec(ct).shape, out_spec[2:]), a["padding"],
                           a["lhs_dilation"], a["rhs_dilation"])
    return e("conv_general_dilated", lhs, ct, window_strides=a["rhs_dilation"], padding=padding,
             lhs_dilation=a["lhs_dilation"], rhs_dilation=a["window_strides"],
             lhs_spec=_spec_transpose(lhs_spec), rhs_spec=_spec_transpose(out_spec),
             out_spec=_spec_transpose(rhs_spec), feature_group_count=bg, batch_group_count=fg,
             precision=a["precision"])


def _conv(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    lhs, rhs = operands
    if (lhs is None) == (rhs is None):
        raise PassFailure(f"mlax-autodiff: {op.name} is linear in exactly one of its two operands in a "
                          "linearized function, got both", op.location)
    if lhs is None:
        return [_conv_lhs(e, op, ct, rhs), None]
    return [None, _conv_rhs(e, op, ct, lhs)]


def _reduce_window_sum(e: Emitter, op: ir.Operation, ct: ir.Value,
                       operands: list[MaybeValue]) -> list[MaybeValue]:
    a = read_attributes(op)
    shape = spec(op.operands[0]).shape
    if 0 in spec(ct).shape or not shape:
        return [e.zeros(op.operands[0].type) if shape else ct]
    pads = _lhs_padding(shape, a["window_dimensions"], a["window_strides"], spec(ct).shape, a["padding"],
                        a["base_dilation"], a["window_dilation"])
    padded = e("pad", ct, e("constant", value=np.zeros((), spec(ct).dtype)), edge_padding_low=pads[0::2],
               edge_padding_high=pads[1::2], interior_padding=tuple(s - 1 for s in a["window_strides"]))
    return [e("reduce_window_sum", padded, window_dimensions=a["window_dimensions"],
              window_strides=a["base_dilation"], padding=(0,) * (2 * len(shape)),
              base_dilation=(1,) * len(shape), window_dilation=a["window_dilation"])]


WINDOWED_TRANSPOSE_RULES: dict[str, Rule] = {
    "conv_general_dilated": _conv,
    "reduce_window_sum": _reduce_window_sum,
}
