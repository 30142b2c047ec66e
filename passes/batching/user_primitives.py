"""Batching calls of user primitives with the batching rule jax's extension API holds
(``batching.primitive_batchers`` or ``axis_primitive_batchers``), traced for the call's batched
operands (batch at dimension 0) by its rules (passes/user_primitives.py), once per
declaration and configuration: the batching of control flow reads which results the rule
leaves unbatched (equinox's ``unvmap_any`` predicate of a while) before the call is batched."""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir

from mlax.passes.symbols import find_derived, mark_derived
from mlax.passes.user_primitives import Rules, apply_rule, call


def batched_rule(declaration: ir.Operation, flags: Sequence[bool], size: int,
                 axis_name: str | None) -> tuple[str, list[bool]]:
    """The primitive's batching rule traced for ``flags`` (its symbol), and which of its
    results are batched."""
    module = declaration.parent
    name = ir.StringAttr(declaration.attributes["sym_name"]).value
    key = f"vmap rule {name} {''.join('1' if f else '0' for f in flags)} {size} {axis_name}"
    found = find_derived(module, key)
    if found is not None:
        return ir.StringAttr(found[0].attributes["sym_name"]).value, found[1]

    def rule(rules: Rules) -> tuple[str, list[bool]]:
        return rules.batch(module, tuple(flags), size, axis_name)

    symbol, out_flags = apply_rule(declaration, "mlax-batch", rule)
    mark_derived(module, symbol, key, out_flags)
    return symbol, list(out_flags)


def batch_user_primitive(op: ir.Operation, declaration: ir.Operation, args: list[ir.Value], flags: list[bool],
                         size: int, point: ir.InsertionPoint,
                         axis_name: str | None) -> tuple[list[ir.Value], list[bool]]:
    """The batched call: a call of the primitive's batching rule traced for ``flags``."""
    symbol, out_flags = batched_rule(declaration, flags, size, axis_name)
    function = ir.SymbolTable(declaration.parent)[symbol].operation
    return call(symbol, function, args, point, op.location), out_flags
