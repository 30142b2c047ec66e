"""Generate dialect/mlax.irdl.mlir from the op table.

The checked-in IRDL file is what `mlir-opt --irdl-file` and the Python bindings load; a
test asserts it equals `render()`, so the table and the file cannot drift apart.
Regenerate with ``python -m mlax.tools.gen_irdl``.
"""

from __future__ import annotations

from pathlib import Path

from mlax.dialect.attrs import IRDL_BASE
from mlax.dialect.registry import OPS, OpDef, Port

IRDL_PATH = Path(__file__).with_name("mlax.irdl.mlir")

HEADER = """\
// The mlax dialect, defined in IRDL. GENERATED from dialect/ops/*.py by
// `python -m mlax.tools.gen_irdl`; do not edit by hand.
//
// Ports that share a constraint variable must have identical types: IRDL binds one
// type per variable for the whole op (variadic ports included).
"""


def _ports(keyword: str, ports: tuple[Port, ...]) -> str:
    items = ", ".join(
        f"{p.name}: {'variadic ' if p.variadic else ''}%{p.type_var}" for p in ports
    )
    return f"    irdl.{keyword}({items})\n"


def _render_op(op: OpDef) -> str:
    lines = [f"  // {op.summary}\n", f"  irdl.operation @{op.name} {{\n"]
    type_vars = list(dict.fromkeys(p.type_var for p in op.operands + op.results))
    for var in type_vars:
        lines.append(f'    %{var} = irdl.base "!builtin.tensor"\n')
    # Optional attributes are left out: IRDL has no optional attribute, and an undeclared one is
    # discardable (dialect/builder.py reads its absence as the default).
    required = {a: kind for a, kind in op.attributes.items() if a not in op.defaults}
    for attr, kind in required.items():
        lines.append(f'    %attr_{attr} = irdl.base "{IRDL_BASE[kind]}"\n')
    if op.operands:
        lines.append(_ports("operands", op.operands))
    if op.results:
        lines.append(_ports("results", op.results))
    if required:
        pairs = ", ".join(f'"{a}" = %attr_{a}' for a in required)
        lines.append(f"    irdl.attributes {{{pairs}}}\n")
    lines.append("  }\n")
    return "".join(lines)


def render() -> str:
    """The IRDL text of the whole dialect, ops in table order grouped by family."""
    body = "\n".join(_render_op(op) for op in OPS.values())
    return f"{HEADER}irdl.dialect @mlax {{\n{body}}}\n"
