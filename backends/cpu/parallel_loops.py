"""`mlax-parallel-loops`: keep an ``scf.parallel`` parallel only where threads pay off.

`convert-linalg-to-parallel-loops` makes every parallel dimension of every linalg op an
``scf.parallel``; `convert-scf-to-openmp` would then fork threads for each of them, nested
ones included, and starting a parallel region costs microseconds. This pass keeps the
outermost ``scf.parallel`` of a loop nest whose work (its iteration count times that of the
loops inside it) reaches ``min-work`` iterations, and rewrites every other one, and every
nested one, into sequential ``scf.for`` loops.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import scf

from mlax.passes.registry import ModulePass, option, register_pass
from mlax.passes.walk import nested_ops

_LOOPS = ("scf.for", "scf.parallel")


def _constant(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.OpView):
        owner = owner.operation
    if isinstance(owner, ir.Operation) and owner.name == "arith.constant":
        attribute = owner.attributes["value"]
        return ir.IntegerAttr(attribute).value if isinstance(attribute, ir.IntegerAttr) else None
    return None


def _trip_counts(op: ir.Operation) -> list[int] | None:
    """Iterations per dimension of an scf.for / scf.parallel with constant bounds."""
    count = (len(op.operands) if op.name == "scf.parallel" else 3) // 3
    if op.name == "scf.for":
        bounds = [(op.operands[0], op.operands[1], op.operands[2])]
    else:
        bounds = [(op.operands[i], op.operands[count + i], op.operands[2 * count + i]) for i in range(count)]
    trips = []
    for lower, upper, step in bounds:
        lo, hi, st = _constant(lower), _constant(upper), _constant(step)
        if lo is None or hi is None or not st:
            return None
        trips.append(max(0, -(-(hi - lo) // st)))
    return trips


def _work(op: ir.Operation) -> int | None:
    """Iterations of the innermost bodies of the loop nest rooted at ``op``, or None if unknown."""
    trips = _trip_counts(op)
    if trips is None:
        return None
    inner = 0
    for block in op.regions[0].blocks:
        for child in block.operations:
            if child.operation.name in _LOOPS:
                work = _work(child.operation)
                if work is None:
                    return None
                inner += work
    return math.prod(trips) * max(inner, 1)


def _serialize(op: ir.Operation) -> None:
    """An scf.parallel without reductions as nested scf.for loops with the same body."""
    body = op.regions[0].blocks[0]
    dims = len(body.arguments)
    operands = list(op.operands)
    point = ir.InsertionPoint(op)
    loops = []
    with op.location:
        for i in range(dims):
            with point:
                loop = scf.ForOp(operands[i], operands[dims + i], operands[2 * dims + i])
                with ir.InsertionPoint(loop.body):
                    terminator = scf.YieldOp([])
            loops.append(loop)
            point = ir.InsertionPoint(terminator)
    for argument, loop in zip(body.arguments, loops, strict=True):
        argument.replace_all_uses_with(loop.induction_variable)
    for child in [o.operation for o in body.operations][:-1]:  # all but the scf.reduce terminator
        child.move_before(terminator.operation)
    op.erase()


def _outermost_only(op: ir.Operation) -> None:
    """A multi-dimensional scf.parallel as a one-dimensional one over its first dimension with
    sequential loops over the others inside: threads split rows, and each thread's inner
    loops stay simple for the vectorizer (a collapsed OpenMP loop nest is not)."""
    body = op.regions[0].blocks[0]
    dims = len(body.arguments)
    if dims == 1:
        return
    operands = list(op.operands)
    index = ir.IndexType.get()
    with op.location, ir.InsertionPoint(op):
        outer = ir.Operation.create(
            "scf.parallel", results=[], operands=[operands[0], operands[dims], operands[2 * dims]],
            attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 1, 0])}, regions=1)
        outer_body = outer.regions[0].blocks.append(index)
        with ir.InsertionPoint(outer_body):
            ir.Operation.create("scf.reduce", results=[], operands=[], regions=0)
    body.arguments[0].replace_all_uses_with(outer_body.arguments[0])
    rest = [operands[i::dims][:3] for i in range(1, dims)]  # (lower, upper, step) of dims 1..
    reduce_op = outer_body.operations[0].operation
    point = ir.InsertionPoint(reduce_op)
    with op.location:
        for (lower, upper, step), argument in zip(rest, list(body.arguments)[1:], strict=True):
            with point:
                loop = scf.ForOp(lower, upper, step)
                with ir.InsertionPoint(loop.body):
                    terminator = scf.YieldOp([])
            argument.replace_all_uses_with(loop.induction_variable)
            point = ir.InsertionPoint(terminator)
    for child in [o.operation for o in body.operations][:-1]:
        child.move_before(terminator.operation)
    op.erase()


def _has_parallel_ancestor(op: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name == "scf.parallel":
            return True
        parent = parent.parent
    return False


@register_pass
@dataclass
class ParallelLoops(ModulePass):
    """Serialize every scf.parallel except outermost ones with at least min-work iterations."""

    argument = "mlax-parallel-loops"
    sees_mlax_ops = False
    summary = "keep only outermost scf.parallel loops with enough work parallel; serialize the rest"

    min_work: int = option(1 << 15, "iterations of a loop nest below which it stays sequential")

    def run(self, module: ir.Operation) -> None:
        loops = [op for op in nested_ops(module) if op.name == "scf.parallel"]
        keep = {id(op) for op in loops if not _has_parallel_ancestor(op) and not op.results
                and (_work(op) or 0) >= self.min_work}
        for op in reversed(loops):  # innermost first: a serialized body may hold another loop
            if id(op) in keep:
                _outermost_only(op)
            elif not op.results:
                _serialize(op)
