"""`mlax-gpu-coalesce`: the innermost dimension of each loop nest goes to ``threadIdx.x``.

``gpu-map-parallel-loops`` maps the dimensions of an ``scf.parallel`` in order: the first to
x, the next to y. Buffers are row-major, so the first dimension of a nest written by
``convert-linalg-to-parallel-loops`` is the one with the largest stride: the 32 threads of a
warp would read 32 rows. This pass reverses the dimensions of every outermost ``scf.parallel``
of host code, so that tiling (`mlax-gpu-pipeline`'s ``block`` sizes, x first) gives the
contiguous dimension the x threads and a warp reads consecutive elements (coalesced).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import scf

from mlax.backends.gpu.device_buffers import host_ops
from mlax.passes.registry import ModulePass, register_pass


def _reverse(loop: ir.Operation) -> None:
    """Rebuild ``loop`` (no reductions) with its dimensions in reverse order."""
    rank = (len(loop.operands)) // 3
    bounds = [list(loop.operands[k * rank:(k + 1) * rank])[::-1] for k in range(3)]
    old = loop.regions[0].blocks[0]
    with ir.InsertionPoint(loop), loop.location:
        new = scf.ParallelOp([], *bounds, [])
        body = new.region.blocks.append(*[ir.IndexType.get()] * rank)
        with ir.InsertionPoint(body):
            terminator = scf.ReduceOp([], 0)
    for k, argument in enumerate(old.arguments):
        argument.replace_all_uses_with(body.arguments[rank - 1 - k])
    for op in [op.operation for op in old.operations][:-1]:
        op.move_before(terminator)
    for name in ("mapping",):
        if name in loop.attributes:
            new.attributes[name] = loop.attributes[name]
    loop.erase()


def _outermost(op: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name == "scf.parallel":
            return False
        parent = parent.parent
    return True


@register_pass
@dataclass
class GpuCoalesce(ModulePass):
    """Reverse the dimensions of outermost scf.parallel nests (the contiguous one first)."""

    argument = "mlax-gpu-coalesce"
    summary = "put the contiguous dimension of each parallel loop nest first (it becomes threadIdx.x)"

    def run(self, module: ir.Operation) -> None:
        for op in host_ops(module):
            if (op.name == "scf.parallel" and len(op.results) == 0 and len(op.operands) >= 6
                    and _outermost(op)):
                _reverse(op)
