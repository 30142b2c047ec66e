"""JVP rules of the windowed ops: conv_general_dilated (bilinear), reduce_window_sum (linear) and
reduce_window_max/min (the tangent at the position each window selects).

reduce_window_max/min select the position of each window that jax's gradient does (its
select_and_scatter_add, on XLA's CPU): the window's positions in row-major order, padding and
base-dilation holes included as -inf (+inf for min), the first one selected to start with and
each later one taking over unless ``selected >= value`` (``<=`` for min). So ties go to the
first maximum (a window [[1, 1], [1, 1]] gives [1, 0, 0, 0], where reduce_max splits evenly),
padding never wins over a number, and NaN passes the selection on. Every window position is
one strided slice of the padded operand; the tangent is a chain of selects on primal masks
(linear, so reverse mode transposes it into the cotangent sent to the selected position).
jax's forward mode (select_and_gather_add) starts from (-inf, 0) and skips padding instead,
which differs only in a window whose numbers are all -inf (jax: tangent 0) or where padding
follows a NaN; its reduction order with padding is XLA's and not always row-major.
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
    """The tangent at the position each window selects, as jax's select_and_scatter_add does:
    the first window position (padding and dilation holes count, holding -inf / +inf for min)
    starts selected and each later one replaces the selection unless ``selected >= value``
    (``<=`` for min), so the first maximum wins ties and NaN passes the selection on."""
    (x,), (t,), (out,) = primals, tangents, outs
    if t is None or not is_float(out) or 0 in spec(out).shape:
        return [None]
    if not spec(x).shape:
        return [t]
    is_max = op.name == "mlax.reduce_window_max"
    positions = _window_positions(e, op)
    values, tangents_at = positions(x, -np.inf if is_max else np.inf), positions(t, 0)
    selected, tangent = values[0], tangents_at[0]
    for k, (value, tangent_here) in enumerate(zip(values[1:], tangents_at[1:], strict=True), 1):
        keep = e("compare", selected, value, comparison_direction="GE" if is_max else "LE")
        if k + 1 < len(values):
            selected = e("select", keep, selected, value)
        tangent = e("select", keep, tangent, tangent_here)
    return [tangent]


WINDOWED_JVP_RULES: dict[str, JvpRule] = {
    "conv_general_dilated": _conv,
    "reduce_window_sum": _reduce_window_sum,
    "reduce_window_max": _reduce_window_chooser,
    "reduce_window_min": _reduce_window_chooser,
}
