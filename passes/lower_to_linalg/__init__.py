"""`mlax-lower-to-linalg`: mlax ops in func.func bodies -> linalg/tensor/arith/math on tensors.

One rule per op name (RULES, gathered from the family modules); a rule builds the
replacement at the op and returns the value that takes over its result. An mlax op
without a rule, or with an unsigned element type (arith works on signless integers and
the pass does not yet rewrite function signatures), fails the pass with an error at the
op's location naming it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from mlax.passes.lower_to_linalg import elementwise, reductions, shape, structural
from mlax.passes.lower_to_linalg.common import Rule, fail
from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import is_mlax, nested_ops

RULES: dict[str, Rule] = {**elementwise.RULES, **structural.RULES, **shape.RULES, **reductions.RULES}


def _unsigned_type(op: ir.Operation) -> ir.Type | None:
    for value in [*op.operands, *op.results]:
        t = value.type
        element = ir.RankedTensorType(t).element_type if isinstance(t, ir.RankedTensorType) else t
        if isinstance(element, ir.IntegerType) and ir.IntegerType(element).is_unsigned:
            return element
    return None


def lower_op(op: ir.Operation) -> None:
    """Replace one mlax op by its lowering, or raise PassFailure at its location."""
    name = op.name.removeprefix("mlax.")
    rule = RULES.get(name)
    if rule is None:
        raise fail(op, f"no lowering for {op.name} yet")
    unsigned = _unsigned_type(op)
    if unsigned is not None:
        raise fail(op, f"{op.name} on unsigned type {unsigned} is not supported yet "
                       f"(arith needs signless integers)")
    with op.location, ir.InsertionPoint(op):
        replacement = rule(op)
    op.results[0].replace_all_uses_with(replacement)
    op.erase()


@register_pass
@dataclass
class LowerToLinalg(ModulePass):
    """Rewrite mlax ops inside func.func bodies into upstream linalg/tensor/arith/math ops."""

    argument = "mlax-lower-to-linalg"
    summary = "lower mlax ops in func.func bodies to linalg/tensor/arith/math on tensors"

    def run(self, module: ir.Operation) -> None:
        # Take every op name before rewriting: an erased op must not be touched again.
        functions = [op for op in nested_ops(module) if op.name == "func.func"]
        for function in functions:
            for op in [op for op in nested_ops(function) if is_mlax(op)]:
                lower_op(op)
