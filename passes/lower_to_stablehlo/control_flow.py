"""TODO: calls of cond/while/scan declarations -> stablehlo.case/while."""

from __future__ import annotations

from mlir import ir


def lower_control_flow(module: ir.Operation) -> None:
    """Rewrite every func.call of a control-flow declaration in place; erase the declarations."""
