"""TODO family docstring."""

from __future__ import annotations

from mlax.passes.lower_to_stablehlo.common import Rule

RULES: dict[str, Rule] = {}
