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

from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import matching_ops


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


def outermost_parallel_loops(module: ir.Operation) -> list[ir.Operation]:
    """The ``scf.parallel`` nests of host code that no other ``scf.parallel`` holds, taken
    before a pass rebuilds any: rebuilding one erases it and its body, never another."""
    return [loop for op in module.regions[0].blocks[0].operations if op.operation.name != "gpu.module"
            for loop in matching_ops(op.operation, lambda inner: inner.name == "scf.parallel")]


@register_pass
@dataclass
class GpuCoalesce(ModulePass):
    """Reverse the dimensions of outermost scf.parallel nests (the contiguous one first)."""

    argument = "mlax-gpu-coalesce"
    sees_mlax_ops = False
    summary = "put the contiguous dimension of each parallel loop nest first (it becomes threadIdx.x)"

    def run(self, module: ir.Operation) -> None:
        for loop in outermost_parallel_loops(module):
            if len(loop.results) == 0 and len(loop.operands) >= 6:
                _reverse(loop)
