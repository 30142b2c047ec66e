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
(their bodies are walked at each call), not memoized as separate derivative functions.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func

from mlax.dialect.transforms import ATTR_PREFIX, DeclarationError, read_transform
from mlax.passes.autodiff.emit import Emitter
from mlax.passes.autodiff.jvp import CUSTOM_LINEAR, emit_jvp
from mlax.passes.autodiff.vjp import emit_vjp
from mlax.passes.registry import ModulePass, PassFailure, register_pass
from mlax.passes.walk import nested_ops

KINDS = ("jvp", "vjp")
# Kinds differentiated through at their calls, and otherwise replaced by a call of the callee.
CUSTOM = ("custom_jvp_call", "custom_vjp_call", "checkpoint")


class _Resolver:
    """Looks functions up by symbol, resolving jvp/vjp declarations on first use."""

    def __init__(self, module: ir.Operation) -> None:
        self.module = module
        self.table = ir.SymbolTable(module)
        self.in_progress: set[str] = set()

    def lookup(self, name: str) -> ir.Operation:
        if name not in self.table:
            raise PassFailure(f"mlax-autodiff: no function @{name} in the module")
        function = self.table[name].operation
        if name in self.in_progress:
            raise PassFailure(f"mlax-autodiff: @{name} depends on its own derivative", function.location)
        try:
            transform = read_transform(function)
        except DeclarationError as error:
            raise PassFailure(f"mlax-autodiff: {error}", function.location) from None
        if transform is not None and transform.kind not in CUSTOM:
            if transform.kind not in KINDS:
                raise PassFailure(f"mlax-autodiff: @{name} is an {ATTR_PREFIX}{transform.kind} declaration, "
                                  f"which mlax-autodiff cannot differentiate through yet", function.location)
            self.resolve(function, transform.kind, transform.fields)
        return function

    def resolve(self, declaration: ir.Operation, kind: str, fields: dict) -> None:
        name = ir.StringAttr(declaration.attributes["sym_name"]).value
        self.in_progress.add(name)
        callee = self.lookup(fields["callee"])
        del declaration.attributes[ATTR_PREFIX + kind]
        with declaration.location:
            block = declaration.opview.add_entry_block()
        arguments = list(block.arguments)
        point = ir.InsertionPoint(block)
        n_in = len(ir.FunctionType(ir.TypeAttr(callee.attributes["function_type"]).value).inputs)
        if kind == "jvp":
            outs, extra = emit_jvp(callee, arguments[:n_in], arguments[n_in:], point, self.lookup)
        else:
            argnums = list(fields["argnums"])
            outs, extra = emit_vjp(callee, arguments[:n_in], arguments[n_in:], argnums, point,
                                   self.module, self.lookup)
        results = list(ir.FunctionType(ir.TypeAttr(declaration.attributes["function_type"]).value).results)
        emitter = Emitter(point, declaration.location)
        extra = [emitter.materialize(v, t) for v, t in zip(extra, results[len(outs):], strict=True)]
        with declaration.location:
            func.ReturnOp([*outs, *extra], ip=point)
        self.in_progress.discard(name)


def _call_primal(declaration: ir.Operation, kind: str, callee: str) -> None:
    """Outside differentiation a custom_jvp_call / custom_vjp_call is its callee: the
    declaration becomes a function that calls it."""
    del declaration.attributes[ATTR_PREFIX + kind]
    with declaration.location:
        block = declaration.opview.add_entry_block()
        results = list(ir.FunctionType(ir.TypeAttr(declaration.attributes["function_type"]).value).results)
        call = func.CallOp(results, callee, list(block.arguments), ip=ir.InsertionPoint(block))
        func.ReturnOp(list(call.results), ip=ir.InsertionPoint(block))


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
                                  "function", op.location)
        marker.erase()
        del CUSTOM_LINEAR[name]


@register_pass
@dataclass
class Autodiff(ModulePass):
    """Resolve mlax.jvp and mlax.vjp declarations into derivative functions."""

    argument = "mlax-autodiff"
    summary = "give mlax.jvp / mlax.vjp declarations bodies: forward mode and linearize + transpose"

    def run(self, module: ir.Operation) -> None:
        resolver = _Resolver(module)
        for op in [o.operation for o in module.regions[0].blocks[0].operations]:
            try:
                transform = read_transform(op)
            except DeclarationError as error:
                raise PassFailure(f"mlax-autodiff: {error}", op.location) from None
            if transform is not None and transform.kind in KINDS and not op.regions[0].blocks:
                resolver.resolve(op, transform.kind, transform.fields)
        for op in [o.operation for o in module.regions[0].blocks[0].operations]:
            transform = read_transform(op)
            if transform is not None and transform.kind in CUSTOM:
                _call_primal(op, transform.kind, transform.fields["callee"])
        _erase_custom_linear_markers(module)
