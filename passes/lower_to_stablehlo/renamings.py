"""The rules of the renamings: every mlax op with a ``stablehlo`` trait (dialect/registry.py)
lowers to the StableHLO (or CHLO) op its trait names, on the same operands, in the same result
type. A family module's explicit rule replaces the renaming where some operand types need more
(elementwise.py: complex max/min, unsigned sign, integer pow, complex sin/cos, logistic)."""

from __future__ import annotations

from mlir import ir

from mlax.dialect.registry import get_op, stablehlo_names
from mlax.passes.lower_to_stablehlo.common import Rule, chlo, is_bool, value

# On booleans the arithmetic ops are the logical ones (StableHLO says so; spelled out here).
_BOOLEAN = {"add": "or", "mul": "and", "max": "or", "min": "and"}


def renamed(op_name: str) -> Rule:
    """The rule of an op with a ``stablehlo`` trait (dialect/registry.py): the StableHLO (or CHLO)
    op it names, on the same operands, of the same result type; on booleans add and max are
    ``or``, mul and min ``and``."""
    dialect, name = get_op(op_name).stablehlo.split(".", 1)

    def rule(op: ir.Operation) -> ir.Value:
        result = op.results[0].type
        if dialect == "chlo":
            return chlo(name, list(op.operands), result)
        return value(_BOOLEAN.get(op_name, name) if is_bool(result) else name, list(op.operands), result)

    return rule


def renaming_rules() -> dict[str, Rule]:
    """`renamed` for every op with a ``stablehlo`` trait; a family module's explicit rule replaces
    it where some operand types need more than the renaming."""
    return {name: renamed(name) for name in stablehlo_names()}
