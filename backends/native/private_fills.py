"""`mlax-private-fills`: every op that writes into a filled tensor gets a fill of its own.

Each contraction (and each reduction) accumulates into a ``linalg.fill`` of zeros, and `cse`
merges equal fills, so after fusion one zero tensor is the init of every gemm of the same
shape. One-shot bufferization must then keep that tensor intact for its later readers: it
fills one buffer and copies it before each gemm writes into it (a 16-layer MLP train step
copied 63 buffers, 46 of them 1 or 4 MB). Before bufferization, this pass gives each such
destination (the init operand of a linalg op, or of an ``scf.for``) a clone of the fill just
before it, so that each buffer is filled (written once) instead of copied (read and
written), and `mlax-linalg-to-blas` can then drop a zero fill that only a gemm reads. The
original fill stays for any other reader and goes when it has none.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import matching_ops


def _is_destination(use: ir.OpOperand) -> bool:
    """Whether ``use`` is an operand its op overwrites: a linalg op's init (the operands after
    its inputs) or an ``scf.for``'s iteration argument."""
    owner = use.owner.operation
    if owner.name == "scf.for":
        return use.operand_number >= 3
    if not owner.name.startswith("linalg.") or "operandSegmentSizes" not in owner.attributes:
        return False
    inputs = ir.DenseI32ArrayAttr(owner.attributes["operandSegmentSizes"])[0]
    return use.operand_number >= inputs


def _privatize(fill: ir.Operation) -> None:
    uses = list(fill.results[0].uses)
    if len(uses) < 2:
        return
    for use in uses:
        if not _is_destination(use):
            continue
        user = use.owner.operation
        clone = fill.clone(ir.InsertionPoint(user))
        user.operands[use.operand_number] = clone.results[0]
    if not list(fill.results[0].uses):
        fill.erase()


@register_pass
@dataclass
class PrivateFills(ModulePass):
    """Clone a linalg.fill on tensors for each op that overwrites it, so none is copied."""

    argument = "mlax-private-fills"
    sees_mlax_ops = False
    summary = "give each destination of a shared linalg.fill its own fill (before bufferization)"

    def run(self, module: ir.Operation) -> None:
        # The fills first: a fill that goes takes its body with it (a walk of every op would
        # visit the freed body next), and no fill lies in another one's body.
        for fill in matching_ops(module, _on_tensors):
            _privatize(fill)


def _on_tensors(op: ir.Operation) -> bool:
    return op.name == "linalg.fill" and len(op.results) == 1  # a fill on a buffer has none
