"""JVP rules of the windowed ops: conv_general_dilated (bilinear), reduce_window_sum (linear) and
reduce_window_max/min (the tangent at the chosen position of each window).

reduce_window_max/min follow JAX's convention for ties the way reduce_max does (the mean of
the tangents at the positions equal to the result): every window position is one strided
slice of the padded operand, compared with the result; padding and dilation holes never
count (a validity mask), a window of padding only (or a NaN result, which equals nothing)
gets 0. JAX's own rule (select_and_gather_add) picks one tied element instead, so the two
agree wherever the maximum of each window is unique. The tangent only flows through pad
(zero padding value), slice, select on a primal mask, add and div by a primal count, which
all have transpose rules.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
from mlir import ir

from mlax.dialect import read_attributes
from mlax.passes.autodiff.emit import Emitter, MaybeValue, is_float, spec

JvpRule = Callable[[Emitter, ir.Operation, list[ir.Value], list[MaybeValue], list[ir.Value]],
                   list[MaybeValue]]


def _conv(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
          outs: list[ir.Value]) -> list[MaybeValue]:
    """Bilinear: conv(t_lhs, rhs) + conv(lhs, t_rhs) with the op's attributes."""
    (lhs, rhs), (t_lhs, t_rhs), attrs = primals, tangents, read_attributes(op)
    if not is_float(outs[0]):
        return [None]
    first = None if t_lhs is None else e("conv_general_dilated", t_lhs, rhs, **attrs)
    return [e.add(first, None if t_rhs is None else e("conv_general_dilated", lhs, t_rhs, **attrs))]


def _reduce_window_sum(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
                       outs: list[ir.Value]) -> list[MaybeValue]:
    (t,) = tangents
    if t is None or not is_float(outs[0]):
        return [None]
    return [e("reduce_window_sum", t, **read_attributes(op))]


def _window_positions(e: Emitter, op: ir.Operation) -> Callable[[ir.Value, object], list[ir.Value]]:
    """A function giving, for a value of the operand's shape, its dilated and padded form
    (holes and padding holding ``fill``) sliced at every window position: one value of the
    result's shape per position."""
    a = read_attributes(op)
    out_shape = spec(op.results[0]).shape
    padding, dilation = a["padding"], a["base_dilation"]

    def positions(value: ir.Value, fill: object) -> list[ir.Value]:
        if any(padding) or any(d != 1 for d in dilation):
            fill_value = e("constant", value=np.asarray(fill, spec(value).dtype))
            value = e("pad", value, fill_value, edge_padding_low=tuple(padding[0::2]),
                      edge_padding_high=tuple(padding[1::2]), interior_padding=tuple(d - 1 for d in dilation))
        taken = []
        for offsets in itertools.product(*(range(k) for k in a["window_dimensions"])):
            starts = tuple(o * d for o, d in zip(offsets, a["window_dilation"], strict=True))
            limits = tuple(s + (n - 1) * st + 1 if n else s
                           for s, n, st in zip(starts, out_shape, a["window_strides"], strict=True))
            taken.append(e("slice", value, start_indices=starts, limit_indices=limits,
                           strides=tuple(a["window_strides"])))
        return taken

    return positions


def _reduce_window_chooser(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
                           outs: list[ir.Value]) -> list[MaybeValue]:
    (x,), (t,), (out,) = primals, tangents, outs
    if t is None or not is_float(out) or 0 in spec(out).shape:
        return [None]
    if not spec(x).shape:
        return [t]
    positions = _window_positions(e, op)
    true = e("broadcast_in_dim", e("constant", value=np.asarray(True)), shape=spec(x).shape,
             broadcast_dimensions=())
    total = count = None
    for valid, value, tangent in zip(positions(true, False), positions(x, 0), positions(t, 0), strict=True):
        hit = e("and", valid, e("compare", value, out, comparison_direction="EQ"))
        total = e.add(total, e("select", hit, tangent, e.zeros(out)))
        count = e.add(count, e("convert", hit, new_dtype=spec(out).dtype))
    none = e("compare", count, e.zeros(out), comparison_direction="EQ")
    return [e("div", total, e("select", none, e.full(out, 1), count))]


WINDOWED_JVP_RULES: dict[str, JvpRule] = {
    "conv_general_dilated": _conv,
    "reduce_window_sum": _reduce_window_sum,
    "reduce_window_max": _reduce_window_chooser,
    "reduce_window_min": _reduce_window_chooser,
}
