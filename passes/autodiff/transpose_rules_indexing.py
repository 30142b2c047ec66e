"""TRANSPOSE rules of gather and the linear scatters (JAX's, jax/_src/lax/slicing.py).

gather's adjoint adds the cotangent windows into zeros where they were read: a scatter_add
with the same numbers and mode, so "clip" clamps as the gather did, "fill" drops the windows
the gather filled, and "promise_in_bounds" drops the windows that did not fit, as JAX does
(its gather clamps them but its transpose drops them). scatter_add's adjoint passes the cotangent to
the operand and gathers it for the updates with the same mode (zero for the windows "fill"
dropped). scatter (set) zeroes
the overwritten elements of the operand's cotangent (a scatter of zeros); an update gets
the cotangent of its element only if it was the write that stayed (the last of duplicates,
found by scattering the update numbers and reading them back), and zero otherwise.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mlir import ir

from mlax.dialect import read_attributes
from mlax.dialect.ops.indexing import gather_attrs, scatter_attrs
from mlax.passes.autodiff.emit import Emitter, MaybeValue, spec
from mlax.passes.autodiff.jvp_rules_indexing import masked_gather

Rule = Callable[[Emitter, ir.Operation, ir.Value, list[MaybeValue]], list[MaybeValue]]


def _gather(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    attrs = read_attributes(op)
    zeros = e.zeros(op.operands[0].type)
    return [e("scatter_add", zeros, operands[1], ct, **scatter_attrs(attrs, attrs["mode"])), None]


def _reads(op: ir.Operation) -> dict:
    attrs = read_attributes(op)
    return gather_attrs(attrs, spec(op.operands[0]).shape, spec(op.operands[2]).shape, attrs["mode"])


def _into_nothing(op: ir.Operation) -> bool:
    """Whether the scatter's operand has no element: nothing was written, so every update's
    cotangent is zero, and no gather could read the windows back (a collapsed dimension of
    size 0 has no slice of size 1)."""
    return spec(op.operands[0]).size == 0


def _scatter_add(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    operand, indices, updates = operands
    drop = read_attributes(op)["mode"] == "fill"  # as JAX: a promise_in_bounds gather clamps
    ct_updates = None
    if updates is None:
        ct_updates = e.zeros(op.operands[2].type) if _into_nothing(op) else \
            masked_gather(e, ct, indices, _reads(op), drop)
    return [ct if operand is None else None, None, ct_updates]


def _scatter(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    operand, indices, updates = operands
    attrs = read_attributes(op)
    updates_type = op.operands[2].type
    ct_operand = ct_updates = None
    if operand is None:
        ct_operand = e("scatter", ct, indices, e.zeros(updates_type), **attrs)
    if updates is None and _into_nothing(op):
        ct_updates = e.zeros(updates_type)
    elif updates is None:
        shape, count = spec(updates_type).shape, spec(updates_type).size
        # Each update's number, 0..count-1, by an iota: a constant would hold count numbers.
        dtype = np.dtype(np.int32 if count <= np.iinfo(np.int32).max else np.int64)
        numbers = e("iota", shape=(count,), dtype=dtype, dimension=0)
        if len(shape) != 1:
            numbers = e("reshape", numbers, shape=shape)
        unwritten = e("broadcast_in_dim", e("constant", value=np.full((), -1, dtype)),
                      shape=spec(op.operands[0]).shape, broadcast_dimensions=())
        last = e("scatter", unwritten, indices, numbers, **attrs)
        stayed = e("compare", e("gather", last, indices, **{**_reads(op), "mode": "clip"}), numbers,
                   comparison_direction="EQ")
        read = e("gather", ct, indices, **{**_reads(op), "mode": "clip"})
        ct_updates = e("select", stayed, read, e.zeros(read))
    return [ct_operand, None, ct_updates]


# Rules of one cotangent: transpose_rules.py adapts them to its table's signature.
INDEXING_TRANSPOSE_RULES: dict[str, Rule] = {
    "gather": _gather,
    "scatter_add": _scatter_add,
    "scatter": _scatter,
}
