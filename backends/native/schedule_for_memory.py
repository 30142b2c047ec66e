"""`mlax-schedule-for-memory`: run each op that frees a temporary as early as it can.

A traced program lists its ops in the order the user's code and the derivative passes
produced them: a training step computes every gradient, then every parameter update
(``p - lr * g``), so all the gradients are alive together at the end of the backward pass
although each could be consumed, and freed, as soon as it exists. XLA's scheduler orders
ops to lower the peak; this pass does the part that matters for such programs, on tensors
(the CPU pipeline's ``linalg`` stage, before bufferization): an op is moved up to just after
the last op that defines one of its operands when

- it is pure (linalg, tensor, arith and math ops on tensors; no calls, no loops), and
- it is the only user of operands that are temporaries of its block (results of ops other
  than constants and ``tensor.empty``) whose bytes add up to at least the bytes of its own
  results that are not returned (returned results become the caller's out-parameters, alive
  for the whole call): moving it ends those temporaries' lives early and starts no longer one.

Ops are visited in program order, so a chain (``lr * g``, then ``p - that``) moves up link by
link. Only the order changes: every op still follows its operands, and pure ops commute
with everything else. `mlax-early-dealloc` then frees each buffer right after its last use.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir

from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import blocks_outside_linalg, nested_ops

_PURE = ("linalg.", "tensor.", "arith.", "math.")
_FREE = ("arith.constant", "tensor.empty")  # no buffer of their own to free


def _movable(op: ir.Operation) -> bool:
    if not op.name.startswith(_PURE) or op.name in _FREE:
        return False
    if op.regions and not op.name.startswith("linalg."):
        return False
    return not any(isinstance(value.type, ir.MemRefType) for value in op.operands)


def _bytes(value: ir.Value) -> int:
    """The size of a statically shaped tensor (0 for anything else)."""
    if not isinstance(value.type, ir.RankedTensorType):
        return 0
    t = ir.RankedTensorType(value.type)
    if not t.has_static_shape:
        return 0
    element = t.element_type
    bits = element.width if hasattr(element, "width") else 64
    return math.prod(t.shape) * max(bits, 8) // 8


def _used_values(op: ir.Operation) -> list[ir.Value]:
    """The values ``op`` reads, those of its regions included."""
    used = list(op.operands)
    if op.regions:
        used.extend(operand for nested in nested_ops(op) for operand in nested.operands)
    return used


def _defining_op(value: ir.Value, block_ops: set[ir.Operation]) -> ir.Operation | None:
    """The op of this block that defines ``value``, if any."""
    if not isinstance(value, ir.OpResult):
        return None
    owner = value.owner.operation
    return owner if owner in block_ops else None


def _schedule(block: ir.Block) -> None:
    order = [op.operation for op in block.operations]
    if not order:
        return
    in_block = set(order)
    terminator = order[-1]
    returned = set(terminator.operands) if terminator.name == "func.return" else set()
    for op in list(order):
        if not _movable(op):
            continue
        definers = {d for v in _used_values(op) if (d := _defining_op(v, in_block)) is not None}
        freed = sum(_bytes(v) for v in set(op.operands)
                    if (d := _defining_op(v, in_block)) is not None and d.name not in _FREE
                    and all(use.owner == op for use in v.uses))
        started = sum(_bytes(r) for r in op.results if r not in returned)
        if freed == 0 or freed < started:
            continue
        last = max(order.index(d) for d in definers)
        position = order.index(op)
        if last + 1 >= position:
            continue
        op.move_after(order[last])
        order.pop(position)
        order.insert(last + 1, op)


@register_pass
@dataclass
class ScheduleForMemory(ModulePass):
    """Move ops that end temporaries' lives up to just after their operands."""

    argument = "mlax-schedule-for-memory"
    sees_mlax_ops = False
    summary = "run each pure op that frees a temporary as early as its operands allow"

    def run(self, module: ir.Operation) -> None:
        for block in blocks_outside_linalg(module):
            _schedule(block)
