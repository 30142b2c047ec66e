"""Rules for the ops that make values: constant, iota, and the identity stop_gradient.

A constant keeps its dense `value` attribute, which is already of the result type (XLA reads
builtin dense attributes); iota is `stablehlo.iota` along `dimension` (XLA counts in the
result type's own arithmetic: narrow integers wrap, floats round, as the reference).
stop_gradient has no meaning after differentiation: its operand takes over its result.
"""

from __future__ import annotations

from mlir import ir

from mlax.passes.lower_to_stablehlo.common import Rule, i64_attr, value


def _constant(op: ir.Operation) -> ir.Value:
    return value("constant", [], op.results[0].type, {"value": op.attributes["value"]})


def _iota(op: ir.Operation) -> ir.Value:
    dimension = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i64_attr(op, "dimension"))
    return value("iota", [], op.results[0].type, {"iota_dimension": dimension})


RULES: dict[str, Rule] = {
    "constant": _constant,
    "iota": _iota,
    "stop_gradient": lambda op: op.operands[0],
}
