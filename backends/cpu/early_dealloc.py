"""`mlax-early-dealloc`: free each temporary buffer right after its last use.

`buffer-deallocation-pipeline` (ownership-based deallocation) frees the buffers a block
allocates at the block's end, so every temporary of a straight-line program lives until the
function returns: peak memory is the sum of all of them, and rematerialization (`checkpoint`)
could save nothing. This pass moves each unconditional ``memref.dealloc`` of a buffer that a
``memref.alloc`` of the same block made to just after the last op of the block that uses the
buffer or anything derived from it: views and casts of it, the memrefs an op that reads it
returns (loop results, calls), and the pointers taken from it (`mlax-linalg-to-blas` passes
``memref.extract_aligned_pointer_as_index`` -> ``index_cast`` -> ``inttoptr`` to BLAS).
A use inside an op's regions is a use by that op. Every value of memref, index, integer or
pointer type computed from the buffer counts as derived, which is conservative (a loaded
index keeps the buffer alive too) but never frees a buffer that is still read. A derived
scalar written to memory (`mlax-lower-callbacks` stores buffer addresses in the record it
passes to the runtime) makes that memory derived too.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import blocks_outside_linalg, nested_ops


def _tracked(value: ir.Value) -> bool:
    """Types that can carry a buffer's address: memrefs, indices, integers, LLVM pointers."""
    t = value.type
    return isinstance(t, (ir.MemRefType, ir.IndexType, ir.IntegerType)) or str(t) == "!llvm.ptr"


def _used_values(op: ir.Operation) -> list[ir.Value]:
    """The values ``op`` reads, its regions included."""
    used = list(op.operands)
    if op.regions:
        used.extend(operand for nested in nested_ops(op) for operand in nested.operands)
    return used


def _hoist_deallocs(block: ir.Block) -> None:
    ops = [op.operation for op in block.operations]
    position = {op: index for index, op in enumerate(ops)}
    roots: dict[ir.Value, set[ir.Operation]] = {}  # value -> the allocs it derives from
    last_use: dict[ir.Operation, ir.Operation] = {}
    deallocs = []
    for op in ops:
        if op.name == "memref.alloc":
            roots[op.results[0]] = {op}
            last_use[op] = op
            continue
        if op.name == "memref.dealloc":
            deallocs.append(op)
            continue
        used = _used_values(op)
        found: set[ir.Operation] = set()
        for value in used:
            found |= roots.get(value, set())
        for alloc in found:
            last_use[alloc] = op
        if found:
            for result in op.results:
                if _tracked(result):
                    roots[result] = found
            # An address (or anything scalar computed from the buffer) written to memory keeps
            # the buffer alive as long as that memory is read: a callback's record holds it.
            if any(not isinstance(value.type, ir.MemRefType) and value in roots for value in used):
                for value in used:
                    if isinstance(value.type, ir.MemRefType):
                        roots[value] = roots.get(value, set()) | found
    for dealloc in deallocs:
        buffer = dealloc.operands[0]
        if isinstance(buffer.owner, ir.Block):
            continue
        alloc = buffer.owner.operation
        # Only an alloc of this block, and only earlier: a value derived from the buffer
        # (say a loaded flag) may be read after the dealloc, up to the terminator.
        if alloc in last_use and position[last_use[alloc]] < position[dealloc]:
            dealloc.move_after(last_use[alloc])


@register_pass
@dataclass
class EarlyDealloc(ModulePass):
    """Move every temporary buffer's dealloc to just after its last use."""

    argument = "mlax-early-dealloc"
    sees_mlax_ops = False
    summary = "free temporary buffers right after their last use (not at the end of the block)"

    def run(self, module: ir.Operation) -> None:
        for block in blocks_outside_linalg(module):
            _hoist_deallocs(block)
