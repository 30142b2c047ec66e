"""JVP rules of gather and the scatters (JAX's rules in jax/_src/lax/slicing.py).

gather is linear in its operand: the tangent is the gather of the operand's tangent, except
that windows a "fill" gather fills get a zero tangent (the fill value is a constant), made
by a select on where the windows fit. scatter_add is linear in operand and updates; scatter
(set) too, since mlax orders duplicate updates (the tangent of the last write wins, as its
value does). scatter_mul is linear in the operand for fixed updates; a tangent of its
updates is not supported (JAX supports it only for unique indices). scatter_min/max follow
JAX's _scatter_extremal_jvp: the tangent of each result element is the mean of the tangents
of the operand element and the updates that equal it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mlir import ir

from mlax.dialect import read_attributes
from mlax.dialect.ops.indexing import gather_attrs
from mlax.passes.autodiff.emit import Emitter, MaybeValue, is_float, spec
from mlax.passes.registry import PassFailure

JvpRule = Callable[[Emitter, ir.Operation, list[ir.Value], list[MaybeValue], list[ir.Value]],
                   list[MaybeValue]]


def window_fits(e: Emitter, shape: tuple[int, ...], indices: ir.Value, attrs: dict) -> ir.Value:
    """Booleans of a gather's result shape: whether each element's window start fitted.
    (A "fill" gather of int8 zeros reads -128 exactly where it did not.)"""
    zero = e("constant", value=np.zeros((), np.int8))
    probe = e("broadcast_in_dim", zero, shape=shape, broadcast_dimensions=())
    read = e("gather", probe, indices, **{**attrs, "mode": "fill"})
    return e("compare", read, e.zeros(read), comparison_direction="EQ")


def masked_gather(e: Emitter, x: ir.Value, indices: ir.Value, attrs: dict, drop: bool) -> ir.Value:
    """gather(x) with the windows that do not fit reading 0 when ``drop`` (JAX's fill_value=0);
    else with ``attrs``' own mode ("promise_in_bounds" must stay: its transpose drops)."""
    if not drop:
        return e("gather", x, indices, **attrs)
    out = e("gather", x, indices, **{**attrs, "mode": "clip"})
    return e("select", window_fits(e, spec(x).shape, indices, attrs), out, e.zeros(out))


def _gather(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
            outs: list[ir.Value]) -> list[MaybeValue]:
    if tangents[0] is None or not is_float(outs[0]):
        return [None]
    attrs = read_attributes(op)
    return [masked_gather(e, tangents[0], primals[1], attrs, attrs["mode"] == "fill")]


def _linear_scatter(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
                    outs: list[ir.Value]) -> list[MaybeValue]:
    """scatter and scatter_add: the same scatter of the operand's and the updates' tangents."""
    if (tangents[0] is None and tangents[2] is None) or not is_float(outs[0]):
        return [None]
    operand, indices, updates = primals
    return [e(op.name.removeprefix("mlax."), e.materialize(tangents[0], operand), indices,
              e.materialize(tangents[2], updates), **read_attributes(op))]


def _scatter_mul(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
                 outs: list[ir.Value]) -> list[MaybeValue]:
    """t * scatter_mul(1, indices, updates): the product of the updates each element got."""
    if not is_float(outs[0]):
        return [None]
    if tangents[2] is not None:
        raise PassFailure("mlax-autodiff: the derivative of mlax.scatter_mul with respect to its updates "
                          "is not supported (JAX supports it only for unique indices)", op.location)
    if tangents[0] is None:
        return [None]
    operand, indices, updates = primals
    factors = e("scatter_mul", e.full(operand, 1), indices, updates, **read_attributes(op))
    return [e("mul", tangents[0], factors)]


def _scatter_extremal(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
                      outs: list[ir.Value]) -> list[MaybeValue]:
    """The mean of the tangents of the operand element and of every update equal to the result."""
    if (tangents[0] is None and tangents[2] is None) or not is_float(outs[0]):
        return [None]
    operand, indices, updates = primals
    (out,) = outs
    if spec(operand).size == 0:  # no element, no window to read back (a 0-size dimension has no slice)
        return [e.zeros(operand)]
    attrs = read_attributes(op)
    drop = attrs["mode"] != "clip"
    reads = gather_attrs(attrs, spec(operand).shape, spec(updates).shape, attrs["mode"])
    won = e("compare", updates, e("gather", out, indices, **{**reads, "mode": "clip"}),
            comparison_direction="EQ")
    if drop:
        won = e("and", won, window_fits(e, spec(operand).shape, indices, reads))
    one, zero = e.full(updates, 1), e.zeros(updates)
    winners = e("scatter_add", e.zeros(operand), indices, e("select", won, one, zero), **attrs)
    kept = e("convert", e("compare", operand, out, comparison_direction="EQ"), new_dtype=spec(out).dtype)
    count = e("add", winners, kept)  # at least 1 everywhere: out is the operand or a winning update
    total = None
    if tangents[0] is not None:
        total = e("mul", tangents[0], kept)
    if tangents[2] is not None:
        chosen = e("select", won, tangents[2], zero)
        total = e.add(total, e("scatter_add", e.zeros(operand), indices, chosen, **attrs))
    return [e("div", total, count)]


INDEXING_JVP_RULES: dict[str, JvpRule] = {
    "gather": _gather,
    "scatter": _linear_scatter,
    "scatter_add": _linear_scatter,
    "scatter_mul": _scatter_mul,
    "scatter_min": _scatter_extremal,
    "scatter_max": _scatter_extremal,
}
