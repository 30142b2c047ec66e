"""Batching calls of user primitives with the batching rule jax's extension API holds
(``batching.primitive_batchers`` or ``axis_primitive_batchers``), traced for the call's batched
operands (batch at dimension 0) by its rules (passes/user_primitives.py)."""

from __future__ import annotations

from mlir import ir

from mlax.passes.user_primitives import Rules, apply_rule, call


def batch_user_primitive(op: ir.Operation, declaration: ir.Operation, args: list[ir.Value], flags: list[bool],
                         size: int, point: ir.InsertionPoint,
                         axis_name: str | None) -> tuple[list[ir.Value], list[bool]]:
    """The batched call: a call of the primitive's batching rule traced for ``flags``."""
    def rule(rules: Rules) -> tuple[str, list[bool]]:
        return rules.batch(declaration.parent, tuple(flags), size, axis_name)

    symbol, out_flags = apply_rule(declaration, "mlax-batch", rule)
    function = ir.SymbolTable(declaration.parent)[symbol].operation
    return call(symbol, function, args, point, op.location), list(out_flags)
