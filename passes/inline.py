"""`mlax-inline`: calls to private functions with bodies are replaced by those bodies.

Upstream's `inline` pass only inlines ops whose dialect says it may (an inliner interface),
and the IRDL-defined mlax dialect has none. The programs the front end builds (a jitted
function calling the derivative functions `mlax-autodiff` wrote) are small and called once,
so the CPU pipeline flattens them before lowering: each `func.call` of a private function
with a body is replaced by a copy of that body (recursively), and private functions nothing
calls or names any more are erased (control-flow declarations keep their bodies).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from mlax.dialect.transforms import referenced_symbols, transform_declarations
from mlax.passes.registry import ModulePass, PassFailure, register_pass
from mlax.passes.walk import nested_ops


def _private_definitions(module: ir.Operation) -> dict[str, ir.Operation]:
    found = {}
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "func.func" and op.regions[0].blocks and "sym_visibility" in op.attributes \
                and ir.StringAttr(op.attributes["sym_visibility"]).value == "private":
            found[ir.StringAttr(op.attributes["sym_name"]).value] = op
    return found


def _inline(call: ir.Operation, callee: ir.Operation) -> None:
    """Replace ``call`` by the ops of a copy of ``callee``: ops in nested regions (scf bodies)
    use the arguments too, so the copy's arguments are replaced use by use, not op by op."""
    copy = callee.clone(ip=ir.InsertionPoint(call))
    block = copy.regions[0].blocks[0]
    for argument, operand in zip(block.arguments, call.operands, strict=True):
        argument.replace_all_uses_with(operand)
    for op in [o.operation for o in block.operations]:
        if op.name == "func.return":
            for result, value in zip(call.results, op.operands, strict=True):
                result.replace_all_uses_with(value)
            break
        op.move_before(call)
    call.erase()
    copy.erase()


@register_pass
@dataclass
class Inline(ModulePass):
    """Inline calls to private function definitions; erase the private functions left unused."""

    argument = "mlax-inline"
    summary = "inline calls to private functions with bodies (the mlax dialect has no inliner interface)"

    def run(self, module: ir.Operation) -> None:
        private = _private_definitions(module)
        for _ in range(64):  # an inlined body may call further private functions
            calls = [op for op in nested_ops(module) if op.name == "func.call"
                     and ir.FlatSymbolRefAttr(op.attributes["callee"]).value in private]
            if not calls:
                break
            for call in calls:
                _inline(call, private[ir.FlatSymbolRefAttr(call.attributes["callee"]).value])
        else:
            raise PassFailure("mlax-inline: calls nest more than 64 levels deep (recursion?)")
        used = {ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                for op in nested_ops(module) if op.name == "func.call"}
        for _, declaration in transform_declarations(module):  # branch and loop bodies
            used.update(referenced_symbols(declaration.kind, declaration.fields))
        for name, function in private.items():
            if name not in used:
                function.erase()
