"""`mlax-gpu-serial-kernels`: host code with nothing parallel in it runs on one GPU thread.

On the GPU road every buffer is in device memory, so host code may not read or write one.
Some bufferized code has no parallel loop for ``convert-parallel-loops-to-gpu`` to map: a
linalg op with no parallel dimension (a reduction to a scalar, an op on rank-0 buffers) and
the sequential loops some lowerings write directly (cumulative sums, sorts). Each such op
(one without results, holding no parallel linalg op) is wrapped in a one-iteration
``scf.parallel``, which becomes a kernel of one working thread: correct, and slow for big
inputs (block reductions and parallel scans are later work, docs/gpu.md). Loops that do
hold parallel linalg ops (a scan's steps) stay on the host and are searched inside.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf

from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import nested_ops

_MEMORY_OPS = ("memref.load", "memref.store")
_CONTROL_FLOW = ("scf.for", "scf.if", "scf.while")


def _is_parallel(op: ir.Operation) -> bool:
    """Whether ``op`` is a linalg op with a parallel dimension (a grid for the GPU)."""
    if not op.name.startswith("linalg.") or op.name == "linalg.yield":
        return False
    if "iterator_types" in op.attributes:
        return "parallel" in str(op.attributes["iterator_types"])
    outputs = [v for v in op.operands if isinstance(v.type, ir.MemRefType)]  # a named op: fill, matmul...
    return bool(outputs) and ir.MemRefType(outputs[-1].type).rank > 0


def _has_parallel_dims(op: ir.Operation) -> bool:
    return any(map(_is_parallel, (op, *nested_ops(op))))


def _serial(op: ir.Operation) -> bool:
    """Whether ``op`` touches memory on the host with nothing parallel to map to a GPU grid."""
    if len(op.results) or _has_parallel_dims(op):
        return False
    if op.name.startswith("linalg.") or op.name in _MEMORY_OPS:
        return True
    return op.name in _CONTROL_FLOW and any(inner.name in _MEMORY_OPS or inner.name.startswith("linalg.")
                                            for inner in nested_ops(op))


def _wrap(op: ir.Operation) -> None:
    """Put ``op`` inside ``scf.parallel (%i) = (0) to (1) step (1)``."""
    with ir.InsertionPoint(op), op.location:
        zero, one = (arith.constant(ir.IndexType.get(), v) for v in (0, 1))
        loop = scf.ParallelOp([], [zero], [one], [one], [])
        body = loop.region.blocks.append(ir.IndexType.get())
        with ir.InsertionPoint(body):
            scf.ReduceOp([], 0)
    op.move_before(body.operations[0])


def _wrap_in(block: ir.Block) -> None:
    for op in [op.operation for op in block.operations]:
        if _serial(op):
            _wrap(op)
        elif op.name in _CONTROL_FLOW:
            for region in op.regions:
                for inner in region.blocks:
                    _wrap_in(inner)


@register_pass
@dataclass
class GpuSerialKernels(ModulePass):
    """Wrap host code with no parallel dimension in a one-iteration scf.parallel."""

    argument = "mlax-gpu-serial-kernels"
    sees_mlax_ops = False
    summary = "run host code with no parallel loop (scalar reductions, sequential loops) on one GPU thread"

    def run(self, module: ir.Operation) -> None:
        for op in module.regions[0].blocks[0].operations:
            if op.operation.name == "func.func":
                for block in op.regions[0].blocks:
                    _wrap_in(block)
