"""JVP rules of the sorting ops (JAX's _sort_jvp: the tangents move with their primals).

sort_permutation returns integers, so it has no tangent. apply_permutation is linear in its
operand: the tangent is the operand's tangent read in the same order (the indices are
integers and carry none), which is how a sorted operand's tangent follows its values.
top_k's values take the tangent at their indices (JAX gathers it): here a one-hot
selection, select(indices == iota, tangent, 0) summed over the last dimension on a
(..., k, n) broadcast, made of ops whose transposes exist (broadcast_in_dim, select with a
primal predicate, reduce_sum); its indices have no tangent.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mlir import ir

from mlax.dialect import read_attributes
from mlax.passes.autodiff.emit import Emitter, MaybeValue, is_float, spec

JvpRule = Callable[[Emitter, ir.Operation, list[ir.Value], list[MaybeValue], list[ir.Value]],
                   list[MaybeValue]]


def _sort_permutation(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
                      outs: list[ir.Value]) -> list[MaybeValue]:
    return [None]


def _apply_permutation(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
                       outs: list[ir.Value]) -> list[MaybeValue]:
    if tangents[0] is None or not is_float(outs[0]):
        return [None]
    return [e("apply_permutation", tangents[0], primals[1], **read_attributes(op))]


def _top_k(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
           outs: list[ir.Value]) -> list[MaybeValue]:
    if tangents[0] is None or not is_float(outs[0]):
        return [None, None]
    shape, k = spec(primals[0]).shape, read_attributes(op)["k"]
    lead = tuple(range(len(shape) - 1))
    grid = (*shape[:-1], k, shape[-1])
    indices = e("broadcast_in_dim", outs[1], shape=grid, broadcast_dimensions=(*lead, len(shape) - 1))
    hit = e("compare", indices, e("iota", shape=grid, dtype=np.dtype(np.int32), dimension=len(shape)),
            comparison_direction="EQ")
    spread = e("broadcast_in_dim", tangents[0], shape=grid, broadcast_dimensions=(*lead, len(shape)))
    picked = e("select", hit, spread, e.zeros(spread))
    return [e("reduce_sum", picked, dimensions=(len(shape),)), None]


SORTING_JVP_RULES: dict[str, JvpRule] = {
    "sort_permutation": _sort_permutation,
    "apply_permutation": _apply_permutation,
    "top_k": _top_k,
}
