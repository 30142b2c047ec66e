"""IR traversal shared by the passes: the ops under an op, in pre-order, as a list.

Passes rewrite while they iterate, so they walk a snapshot rather than the live IR (the
bindings' `Operation.walk` calls back into a tree that must not change under it).
"""

from __future__ import annotations

from mlir import ir


def nested_ops(root: ir.Operation) -> list[ir.Operation]:
    """Every op nested in ``root``'s regions (not ``root`` itself), parents before children."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    found.append(child.operation)
                    visit(child.operation)

    visit(root.operation)
    return found


def is_mlax(op: ir.Operation) -> bool:
    return op.name.startswith("mlax.")
