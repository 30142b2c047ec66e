"""Forward and reverse mode through user primitives, with the rules jax's extension API holds.

A call with nonzero tangents is replaced by the primitive's JVP rule traced for that pattern of
tangents (passes/user_primitives.py) and walked in place, so the rule's own primitive calls on
tangents are linear ops of the linearization; reverse mode transposes such a call with the
primitive's transpose rule, traced for its linear operands and present cotangents.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from mlax.passes.autodiff.emit import MaybeValue, is_float
from mlax.passes.user_primitives import apply_rule, call

PASS = "mlax-autodiff"
Emitted = tuple[list[ir.Value], list[MaybeValue]]  # values and their tangents (None: zero)


def emit_user_primitive_jvp(declaration: ir.Operation, operands: list[ir.Value], tangents: list[MaybeValue],
                            point: ir.InsertionPoint, lookup: Callable[[str], ir.Operation],
                            location: ir.Location, emit_jvp: Callable[..., Emitted]) -> Emitted:
    """The call of ``declaration`` on ``operands`` and its tangents, by the primitive's JVP rule
    (a function ``emit_jvp``, jvp.py's, walks in place)."""
    symbol = ir.StringAttr(declaration.attributes["sym_name"]).value
    nonzero = tuple(t is not None and is_float(v) for t, v in zip(tangents, operands, strict=True))
    n_out = len(ir.FunctionType(ir.TypeAttr(declaration.attributes["function_type"]).value).results)
    if not any(nonzero):
        return call(symbol, declaration, operands, point, location), [None] * n_out
    rule, flags = apply_rule(declaration, PASS, lambda rules: rules.jvp(declaration.parent, nonzero))
    arguments = [*operands, *(t for t, f in zip(tangents, nonzero, strict=True) if f)]
    results, _ = emit_jvp(lookup(rule), arguments, [None] * len(arguments), point, lookup)
    present = iter(results[n_out:])
    out_tangents = [next(present) if f else None for f in flags]
    return results[:n_out], [t if t is not None and is_float(t) else None for t in out_tangents]


def transpose_user_primitive(point: ir.InsertionPoint, op: ir.Operation, declaration: ir.Operation,
                             cts: list[MaybeValue], known: list[MaybeValue]) -> list[MaybeValue]:
    """Cotangents of the linear operands (``known`` None) of a call of ``declaration``, by the
    primitive's transpose rule."""
    linear = tuple(k is None for k in known)
    present = tuple(c is not None for c in cts)
    symbol, flags = apply_rule(declaration, PASS,
                               lambda rules: rules.transpose(declaration.parent, linear, present))
    function = ir.SymbolTable(declaration.parent)[symbol].operation
    arguments = [k for k in known if k is not None] + [c for c in cts if c is not None]
    results = iter(call(symbol, function, arguments, point, op.location))
    given = iter(flags)
    return [(next(results) if next(given) else None) if k is None else None for k in known]
