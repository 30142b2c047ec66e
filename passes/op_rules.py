"""The driver both lowerings share: every mlax op in a module's functions replaced by its
rule's result (`mlax-lower-to-linalg`, `mlax-lower-to-stablehlo`).

A rule gets the op with the insertion point and location set to it and returns the value
that takes over its single result, of the op's own type (users may dispatch on that type:
unsigned or not). An op without a rule is a PassFailure at its location naming it.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from mlax.passes.registry import PassFailure
from mlax.passes.walk import is_mlax, nested_ops

Rule = Callable[[ir.Operation], ir.Value]


def lower_mlax_ops(module: ir.Operation, rules: dict[str, Rule],
                   missing: Callable[[ir.Operation], PassFailure]) -> None:
    """Replace every mlax op inside ``module``'s func.func bodies by ``rules[name](op)``;
    ``missing(op)`` is the failure for an op without a rule."""
    # Take every op first: an erased op must not be touched again.
    functions = [op for op in nested_ops(module) if op.name == "func.func"]
    for function in functions:
        for op in [op for op in nested_ops(function) if is_mlax(op)]:
            rule = rules.get(op.name.removeprefix("mlax."))
            if rule is None:
                raise missing(op)
            with op.location, ir.InsertionPoint(op):
                replacement = rule(op)
            assert replacement.type == op.results[0].type, f"{op.name} lowered to {replacement.type}"
            op.results[0].replace_all_uses_with(replacement)
            op.erase()
