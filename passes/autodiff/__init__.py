"""`mlax-autodiff`: give every `mlax.jvp` / `mlax.vjp` declaration a body.

Functions with a user-defined derivative (`mlax.custom_jvp_call` declarations: a callee and
its JVP rule function) are differentiated with that rule; once all derivatives exist, each
such declaration becomes a function calling its callee.

A declaration (dialect/transforms.py) names a callee; the pass writes the derivative
function in its place: forward mode (jvp.py) re-emits the callee's ops with their tangents
(one JVP rule per op, jvp_rules.py); reverse mode (vjp.py) linearizes and transposes the
linear part (one transpose rule per linear op, transpose_rules.py). Then the declaration
attribute is dropped, so what is left is plain mlax code that every later pass and backend
treats like any other program. Declarations are resolved on demand (a derivative of a
function that calls another declaration resolves that one first), so derivatives of
derivatives (grad of grad) work to any order. Called functions are differentiated in place
(their bodies are walked at each call), except a nested jit's function (pyfront/nested_jit.py),
which is derived once per configuration and called: forward mode writes its JVP function
(jvp.py), reverse mode splits its linearization into a primal function returning residuals and
a linear function, whose transpose is written once per set of nonzero cotangents (vjp.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from mlax.passes.autodiff import shard_map  # noqa: F401  (adds the shard_map rules to control_flow's tables)
from mlax.passes.autodiff.emit import MaybeValue
from mlax.passes.autodiff.jvp import CUSTOM_LINEAR, emit_jvp
from mlax.passes.autodiff.varying import annotate_varying, from_specs
from mlax.passes.autodiff.vjp import emit_vjp
from mlax.passes.expand_transforms import FINALIZERS, HANDLERS, PREPARERS, Resolver
from mlax.passes.registry import ModulePass, PassFailure, register_pass
from mlax.passes.walk import nested_ops

KINDS = ("jvp", "vjp")


def _jvp(resolver: Resolver, declaration: ir.Operation, callee: ir.Operation, fields: dict,
         arguments: list[ir.Value], point: ir.InsertionPoint) -> list[MaybeValue]:
    half = len(arguments) // 2
    outs, tangents = emit_jvp(callee, arguments[:half], arguments[half:], point, resolver.lookup)
    return [*outs, *tangents]


def _vjp(resolver: Resolver, declaration: ir.Operation, callee: ir.Operation, fields: dict,
         arguments: list[ir.Value], point: ir.InsertionPoint) -> list[MaybeValue]:
    n_in = len(ir.FunctionType(ir.TypeAttr(callee.attributes["function_type"]).value).inputs)
    varying = from_specs(fields["varying"]) if fields.get("varying") is not None else None
    outs, cotangents = emit_vjp(callee, arguments[:n_in], arguments[n_in:], list(fields["argnums"]), point,
                                resolver.module, resolver.lookup, varying)
    return [*outs, *cotangents]


def _erase_custom_linear_markers(module: ir.Operation) -> None:
    """Reverse mode transposed every custom-VJP marker call; one left means forward mode met a
    custom_vjp function, which (as in JAX) has no JVP."""
    table = ir.SymbolTable(module)
    for name in list(CUSTOM_LINEAR):
        if name not in table:
            continue
        marker = table[name].operation
        for op in nested_ops(module):
            if op.name == "func.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value == name:
                raise PassFailure("mlax-autodiff: can't apply forward-mode autodiff (jvp) to a custom_vjp "
                                  "function", op.location, kind=TypeError)
        marker.erase()
        del CUSTOM_LINEAR[name]


@register_pass
@dataclass
class Autodiff(ModulePass):
    """Resolve mlax.jvp and mlax.vjp declarations into derivative functions."""

    argument = "mlax-autodiff"
    summary = "give mlax.jvp / mlax.vjp declarations bodies: forward mode and linearize + transpose"

    def run(self, module: ir.Operation) -> None:
        Resolver(module, KINDS, self.argument).run()


HANDLERS.update(jvp=_jvp, vjp=_vjp)
PREPARERS.append(annotate_varying)
FINALIZERS.append(_erase_custom_linear_markers)
