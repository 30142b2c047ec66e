"""Forward mode through host callbacks (jax's rules for debug_callback and pure_callback).

A debug callback is called with the primal values only and has no tangents (jax's
``debug_callback_jvp_rule``): under jvp and grad it runs once, in the primal computation, so
reverse mode never has to transpose it. A pure or io callback has no derivative: with a
nonzero tangent on any operand it is jax's ValueError; with none (inside a custom_jvp/custom_vjp
rule, or on values that do not depend on the differentiated inputs) it is a plain primal call.
The backward pass of a scan or cond recomputes its body's primal values: there its debug
callbacks are dropped (`drop_debug_callbacks`), so grad calls each once, as jax does.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import func

from mlax.dialect.callbacks import callee_of, read_callback
from mlax.dialect.transforms import Transform
from mlax.passes.autodiff.emit import MaybeValue
from mlax.passes.registry import PassFailure
from mlax.passes.walk import nested_ops

# jax's errors for a callback with a nonzero tangent on an operand.
NO_JVP = {
    "pure": "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while taking "
            "gradients.",
    "io": "IO callbacks do not support JVP.",
}


def emit_callback_jvp(
    declaration: ir.Operation,
    transform: Transform,
    operands: list[ir.Value],
    tangents: list[MaybeValue],
    point: ir.InsertionPoint,
    location: ir.Location,
) -> tuple[list[ir.Value], list[MaybeValue]]:
    """The call of ``declaration`` on the primal ``operands`` at ``point``, and its (zero) tangents."""
    kind = transform.fields["kind"]
    if kind in NO_JVP and any(t is not None for t in tangents):
        raise PassFailure(
            f"mlax-autodiff: {NO_JVP[kind]} (the callback {transform.fields['name']}, @{transform.name})",
            location,
        )
    results = list(ir.FunctionType(ir.TypeAttr(declaration.attributes["function_type"]).value).results)
    with location:
        call = func.CallOp(results, transform.name, operands, ip=point)
    return list(call.results), [None] * len(results)


def drop_debug_callbacks(function: ir.Operation) -> None:
    """Erase the debug callback calls of a function that recomputes primal values in a
    backward pass (the vjp of a scan body or cond branch): jax calls them in the forward pass
    only, once."""
    table = ir.SymbolTable(function.parent)
    for op in nested_ops(function):
        if op.name == "func.call" and callee_of(op) in table:
            transform = read_callback(table[callee_of(op)])
            if transform is not None and transform.fields["kind"] == "debug":
                op.erase()
