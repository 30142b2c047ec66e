"""Batch rules of the sorting ops (batch dimension at 0, as every batch rule).

sort_permutation and apply_permutation sort along one dimension of each batch element
separately, so the batched op is the same op one dimension further along; apply_permutation
needs its operand and indices of one shape: an unbatched one is broadcast along the batch.
top_k works on the last dimension, which the leading batch dimension leaves in place.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from mlax.dialect import read_attributes
from mlax.passes.autodiff.emit import Emitter, spec

BatchRule = Callable[[Emitter, ir.Operation, list[ir.Value], list[bool], int], list[ir.Value]]


def _broadcast(e: Emitter, value: ir.Value, size: int) -> ir.Value:
    shape = spec(value).shape
    return e("broadcast_in_dim", value, shape=(size, *shape),
             broadcast_dimensions=tuple(range(1, len(shape) + 1)))


def _shift_dimension(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
                     size: int) -> list[ir.Value]:
    operands = [v if b else _broadcast(e, v, size) for v, b in zip(operands, batched, strict=True)]
    dimension = read_attributes(op)["dimension"] + 1
    return [e(op.name.removeprefix("mlax."), *operands, dimension=dimension)]


def _top_k(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
           size: int) -> list[ir.Value]:
    return e.many("top_k", *operands, **read_attributes(op))


SORTING_BATCH_RULES: dict[str, BatchRule] = {
    "sort_permutation": _shift_dimension,
    "apply_permutation": _shift_dimension,
    "top_k": _top_k,
}
