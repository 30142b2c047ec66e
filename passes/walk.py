"""IR traversal shared by the passes: the ops under an op, in pre-order, as a list.

Passes rewrite while they iterate, so they take a snapshot list first rather than rewriting
inside `Operation.walk`'s callbacks (the tree must not change under a walk).
"""

from __future__ import annotations

from mlir import ir


def nested_ops(root: ir.Operation) -> list[ir.Operation]:
    """Every op nested in ``root``'s regions (not ``root`` itself), parents before children.

    Collected by MLIR's own pre-order walk (a Python recursion over regions, blocks and ops
    costs several times more, and passes walk after every rewrite)."""
    root = root.operation
    found: list[ir.Operation] = []

    def collect(op: ir.Operation) -> ir.WalkResult:
        found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(collect, ir.WalkOrder.PRE_ORDER)
    return found[1:]


def blocks_outside_linalg(root: ir.Operation) -> list[ir.Block]:
    """Every block under ``root`` except linalg ops' bodies (scalar code, nothing to reorder)."""
    return [block for op in nested_ops(root) if not op.name.startswith("linalg.")
            for region in op.regions for block in region.blocks]


def ops_outside_linalg(root: ir.Operation) -> list[ir.Operation]:
    """Every op nested in ``root``'s regions, in pre-order, except the ops of linalg ops' bodies
    (a program on buffers as a sequence of kernels, loops and conditionals)."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    found.append(inner.operation)
                    if not inner.operation.name.startswith("linalg."):
                        visit(inner.operation)

    visit(root.operation)
    return found


def is_mlax(op: ir.Operation) -> bool:
    return op.name.startswith("mlax.")
