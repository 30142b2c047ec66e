"""IR traversal shared by the passes: the ops under an op, in pre-order, as a list.

Passes rewrite while they iterate, so they take a snapshot list first rather than rewriting
inside `Operation.walk`'s callbacks (the tree must not change under a walk). A snapshot holds
handles, and the Python bindings do not invalidate the other handles of an op that is erased:
touching one (even its ``name``) reads freed memory. So a pass rewrites only ops it took
before the first rewrite, none of which any rewrite erases: an erased op takes the ops of its
regions with it, and a rewrite that erases other ops (fills, producers, loop bodies) must not
erase a listed one. `matching_ops` gives such a list for the common case, a rewrite that
erases the op it is given (docs/passes.md, "Rewriting safely").
"""

from __future__ import annotations

from collections.abc import Callable

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


def matching_ops(root: ir.Operation, predicate: Callable[[ir.Operation], bool]) -> list[ir.Operation]:
    """The ops nested in ``root`` for which ``predicate`` holds, in pre-order, without looking
    inside a match: no match lies in another's regions, so a rewrite that erases the op it is
    given (and its regions with it) leaves every other match alive."""
    root = root.operation
    found: list[ir.Operation] = []

    def collect(op: ir.Operation) -> ir.WalkResult:
        if op != root and predicate(op):
            found.append(op)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    root.walk(collect, ir.WalkOrder.PRE_ORDER)
    return found


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
