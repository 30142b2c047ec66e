"""Rules for dynamic_slice and dynamic_update_slice: windows at run-time start indices.

Each start index (a rank-0 tensor of any integer type) is extracted, extended to i64 by
its signedness and clamped into [0, dim - size] as XLA does (minui alone for unsigned
indices, so ui64 values past the i64 range clamp high too), then cast to `index`.
dynamic_slice is a linalg.generic over the result reading the operand at start + i;
dynamic_update_slice a generic over the operand that reads the update where
i - start < size (one unsigned compare per dimension) at clamped, always in-bounds
indices. An empty update leaves the operand.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import arith, tensor

from mlax.dialect.opviews import linalg
from mlax.passes.lower_to_linalg.common import Rule, generic, is_unsigned, scalar, width


def _clamped_starts(indices: Sequence[ir.Value], shape: Sequence[int],
                    sizes: Sequence[int]) -> list[ir.Value]:
    """Each start index clamped into [0, shape[d] - sizes[d]], as an `index`."""
    i64, starts = ir.IntegerType.get_signless(64), []
    for index, dim, size in zip(indices, shape, sizes, strict=True):
        start = tensor.extract(index, [])
        unsigned = is_unsigned(start.type)
        if width(start.type) < 64:
            start = (arith.extui if unsigned else arith.extsi)(i64, start)
        limit = scalar(start.type, dim - size)
        start = arith.minui(start, limit) if unsigned else \
            arith.minsi(arith.maxsi(start, scalar(start.type, 0)), limit)
        starts.append(arith.index_cast(ir.IndexType.get(), start))
    return starts


def _dynamic_slice(op: ir.Operation) -> ir.Value:
    operand, *indices = op.operands
    result = ir.RankedTensorType(op.results[0].type)
    starts = _clamped_starts(indices, ir.RankedTensorType(operand.type).shape, result.shape)

    def body() -> ir.Value:
        at = [arith.addi(start, linalg.IndexOp(d).result) for d, start in enumerate(starts)]
        return tensor.extract(operand, at)

    return generic([], result, body)


def _dynamic_update_slice(op: ir.Operation) -> ir.Value:
    operand, update, *indices = op.operands
    sizes = ir.RankedTensorType(update.type).shape
    if 0 in sizes:
        return operand
    starts = _clamped_starts(indices, ir.RankedTensorType(operand.type).shape, sizes)

    def body(old: ir.Value) -> ir.Value:
        index = ir.IndexType.get()
        inside, at = None, []
        for d, (start, size) in enumerate(zip(starts, sizes, strict=True)):
            offset = arith.subi(linalg.IndexOp(d).result, start)  # below the window: huge unsigned
            ok = arith.cmpi(arith.CmpIPredicate.ult, offset, arith.constant(index, size))
            inside = ok if inside is None else arith.andi(inside, ok)
            at.append(arith.minui(offset, arith.constant(index, size - 1)))
        new = tensor.extract(update, at)
        return new if inside is None else arith.select(inside, new, old)

    return generic([operand], op.results[0].type, body)


RULES: dict[str, Rule] = {"dynamic_slice": _dynamic_slice, "dynamic_update_slice": _dynamic_update_slice}
