"""`mlax-distinct-results`: a function returns each tensor value at most once.

`buffer-results-to-out-params` (LLVM 22) crashes when one buffer is returned twice, which
happens as soon as a function returns the same value in two places (``return x, x``, or two
results that CSE made equal). Each repeat becomes a ``bufferization.alloc_tensor`` copy,
so every result gets its own out-parameter; the copy costs one pass over that result.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import bufferization

from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import nested_ops


def _distinct(terminator: ir.Operation) -> None:
    seen: list[ir.Value] = []
    for i, value in enumerate(terminator.operands):
        if value in seen and isinstance(value.type, ir.RankedTensorType):
            with terminator.location, ir.InsertionPoint(terminator):
                terminator.operands[i] = bufferization.alloc_tensor(value.type, [], copy=value)
        seen.append(value)


@register_pass
@dataclass
class DistinctResults(ModulePass):
    """Copy repeated tensor operands of func.return so each result is its own value."""

    argument = "mlax-distinct-results"
    sees_mlax_ops = False
    summary = "copy tensor values a function returns more than once (before bufferization)"

    def run(self, module: ir.Operation) -> None:
        for op in nested_ops(module):
            if op.name == "func.return":
                _distinct(op)
