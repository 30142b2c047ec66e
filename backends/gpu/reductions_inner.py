"""`mlax-gpu-reductions-inner`: the reduction dimensions of a linalg.generic become its innermost
loops, so that ``convert-linalg-to-parallel-loops`` gives one GPU-mappable ``scf.parallel``.

That conversion writes loops in the op's dimension order, a ``scf.for`` for a reduction
dimension and an ``scf.parallel`` for the parallel ones after it: a column sum
(``iterator_types = ["reduction", "parallel"]``) became a host loop launching one kernel per
row. The dimensions are permuted (parallel ones first, each group in its order): the indexing
maps are composed with the permutation and ``linalg.index`` ops renumbered; the op computes the
same thing, each thread now reduces its own column in a loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import nested_ops


def _iterator_names(op: ir.Operation) -> list[str]:
    return [str(t).split("<")[-1].rstrip(">") for t in ir.ArrayAttr(op.attributes["iterator_types"])]


def _permute(op: ir.Operation, kinds: list[str]) -> None:
    order = sorted(range(len(kinds)), key=lambda d: kinds[d] != "parallel")  # stable: each group in order
    n = len(order)
    old_to_new = ir.AffineMap.get(n, 0, [ir.AffineDimExpr.get(order.index(d)) for d in range(n)])
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    permuted = [ir.AffineMap.get(n, 0, [e.compose(old_to_new) for e in m.results]) for m in maps]
    op.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in permuted])
    types = list(ir.ArrayAttr(op.attributes["iterator_types"]))
    op.attributes["iterator_types"] = ir.ArrayAttr.get([types[d] for d in order])
    for inner in nested_ops(op):
        if inner.name == "linalg.index":
            old = ir.IntegerAttr(inner.attributes["dim"]).value
            inner.attributes["dim"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), order.index(old))


@register_pass
@dataclass
class GpuReductionsInner(ModulePass):
    """Permute each linalg.generic's dimensions: parallel ones outer, reductions inner."""

    argument = "mlax-gpu-reductions-inner"
    sees_mlax_ops = False
    summary = "make the reduction dimensions of each linalg.generic its innermost ones"

    def run(self, module: ir.Operation) -> None:
        for op in nested_ops(module):
            if op.name == "linalg.generic":
                kinds = _iterator_names(op)
                first_reduction = next((d for d, k in enumerate(kinds) if k != "parallel"), len(kinds))
                if "parallel" in kinds[first_reduction:]:
                    _permute(op, kinds)
