"""Regenerate docs/dialect.md from the op table: ``python -m mlax.tools.gen_docs``.

Like MLIR's ODS-generated dialect docs: one entry per op with its operands, results,
attributes and semantics, so the reference cannot miss an op (a test checks it is current).
"""

from __future__ import annotations

import sys
from pathlib import Path

from mlax.dialect.attrs import IRDL_BASE
from mlax.dialect.registry import OPS, OpDef

DOCS_PATH = Path(__file__).resolve().parent.parent / "docs" / "dialect.md"
INTRO_PATH = DOCS_PATH.with_name("dialect_intro.md")


def _ports(op: OpDef, ports: tuple) -> str:
    if not ports:
        return "none"
    return ", ".join(f"`{'*' if p.variadic else ''}{p.name}: {p.type_var}`" for p in ports)


def _traits(op: OpDef) -> str:
    """The op's traits (dialect/registry.py; docs/passes.md, "Adding an op")."""
    traits = ["elementwise"] if op.elementwise else []
    traits += ["zero derivative"] if op.zero_derivative else []
    traits += [f"linear in {', '.join(op.operands[i].name for i in op.linear)}"] if op.linear else []
    traits += [f"StableHLO `{op.stablehlo}`"] if op.stablehlo else []
    traits += ["complex values"] if op.complex else []
    if op.sharding is not None and not (op.elementwise and op.sharding == "pointwise"):
        traits.append(f"sharding {op.sharding}")
    return ", ".join(traits)


def render_op(op: OpDef) -> str:
    lines = [f"### `{op.full_name}`", "", op.summary, ""]
    lines.append(f"- operands: {_ports(op, op.operands)}")
    lines.append(f"- results: {_ports(op, op.results)}")
    if op.attributes:
        attrs = ", ".join(f"`{k}` ({kind}, `{IRDL_BASE[kind]}`{', optional' if k in op.defaults else ''})"
                          for k, kind in op.attributes.items())
        lines.append(f"- attributes: {attrs}")
    traits = _traits(op)
    if traits:
        lines.append(f"- traits: {traits}")
    lines.append("")
    if op.description:
        lines += [op.description.strip(), ""]
    return "\n".join(lines)


def render() -> str:
    intro = INTRO_PATH.read_text() if INTRO_PATH.exists() else "# The mlax dialect\n"
    families: dict[str, list[OpDef]] = {}
    for op in OPS.values():
        families.setdefault(op.family, []).append(op)
    parts = [intro.rstrip(), "", "<!-- GENERATED below by `python -m mlax.tools.gen_docs` from "
             "dialect/ops/*.py; edit the op definitions, not this file. -->", ""]
    for family, ops in families.items():
        parts += [f"## {family}", ""]
        parts += [render_op(op) for op in ops]
    return "\n".join(parts).rstrip() + "\n"


def main() -> None:
    DOCS_PATH.write_text(render())
    print(f"wrote {DOCS_PATH} ({len(OPS)} ops)", file=sys.stderr)


if __name__ == "__main__":
    main()
