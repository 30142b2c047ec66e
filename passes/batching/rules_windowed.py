"""Batch rules of the windowed ops (batch dimension at 0, as every batch rule).

conv_general_dilated never loops: it is JAX's _conv_general_dilated_batch_rule. A batched
lhs folds the batch into its batch dimension (inside each batch group), a batched rhs into
its output features (inside each feature or batch group), both batched into the feature
groups (or the batch groups); the result's batch or feature dimension is split back and
the batch moved to the front. reduce_window_* gets a window of size 1 along the batch.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from mlax.dialect import read_attributes
from mlax.passes.autodiff.emit import Emitter, spec
from mlax.passes.autodiff.transpose_rules_windowed import reshape_axis_into as into
from mlax.passes.autodiff.transpose_rules_windowed import reshape_axis_out_of as out_of

BatchRule = Callable[[Emitter, ir.Operation, list[ir.Value], list[bool], int], list[ir.Value]]


def _to_front(e: Emitter, value: ir.Value, dim: int) -> ir.Value:
    if dim == 0:
        return value
    rank = spec(value).ndim
    return e("transpose", value, permutation=(dim, *(d for d in range(rank) if d != dim)))


def _conv(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
          size: int) -> list[ir.Value]:
    a = read_attributes(op)
    lhs_spec, rhs_spec, out_spec = a["lhs_spec"], a["rhs_spec"], a["out_spec"]
    fg, bg = a["feature_group_count"], a["batch_group_count"]
    lhs, rhs = operands
    if all(batched):
        if bg > 1:
            lhs, bg = into(e, 0, lhs_spec[0], lhs), bg * size
        else:
            lhs, fg = into(e, 0, lhs_spec[1], lhs), fg * size
        rhs = into(e, 0, rhs_spec[0], rhs)
        split = out_spec[1]
    elif batched[0]:
        if bg > 1:  # the batch goes inside each batch group
            lhs = into(e, 0, lhs_spec[0] + 1, out_of(e, lhs_spec[0] + 1, bg, lhs))
            lhs = into(e, lhs_spec[0], lhs_spec[0], lhs)
        else:
            lhs = into(e, 0, lhs_spec[0], lhs)
        split = out_spec[0]
    else:
        groups = fg * bg
        if groups > 1:  # the batch goes inside each group's output features
            rhs = into(e, 0, rhs_spec[0] + 1, out_of(e, rhs_spec[0] + 1, groups, rhs))
            rhs = into(e, rhs_spec[0], rhs_spec[0], rhs)
        else:
            rhs = into(e, 0, rhs_spec[0], rhs)
        split = out_spec[1]
    out = e("conv_general_dilated", lhs, rhs, **{**a, "feature_group_count": fg, "batch_group_count": bg})
    if not batched[0] and fg * bg > 1:
        out = out_of(e, split + 1, size, out_of(e, split, fg * bg, out))  # (groups, batch, group features)
        out = into(e, split, split + 1, out)  # (batch, groups x group features)
    else:
        out = out_of(e, split, size, out)
    return [_to_front(e, out, split)]


def _reduce_window(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
                   size: int) -> list[ir.Value]:
    a = read_attributes(op)
    attrs = {"window_dimensions": (1, *a["window_dimensions"]), "window_strides": (1, *a["window_strides"]),
             "padding": (0, 0, *a["padding"]), "base_dilation": (1, *a["base_dilation"]),
             "window_dilation": (1, *a["window_dilation"])}
    return [e(op.name.removeprefix("mlax."), *operands, **attrs)]


WINDOWED_BATCH_RULES: dict[str, BatchRule] = {
    "conv_general_dilated": _conv,
    **{f"reduce_window_{kind}": _reduce_window for kind in ("sum", "max", "min")},
}
