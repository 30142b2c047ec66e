"""TODO family docstring."""

from __future__ import annotations

from mlax.passes.lower_to_stablehlo.common import Rule, value

RULES: dict[str, Rule] = {"add": lambda op: value("add", list(op.operands), op.results[0].type)}
