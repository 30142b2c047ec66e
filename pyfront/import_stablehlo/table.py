"""The converter table (StableHLO op name -> converter), gathered from the family modules,
and the up-front check that a module holds only ops it can import."""

from __future__ import annotations

from mlir import ir

from mlax.import_stablehlo import (
    contraction,
    control_flow,
    elementwise,
    fft,
    indexing,
    linalg,
    reductions,
    shape,
    sorting,
)
from mlax.import_stablehlo.core import Entry, UnsupportedStablehloError, attribute

CONVERTERS: dict[str, Entry] = {
    **elementwise.CONVERTERS, **shape.CONVERTERS, **reductions.CONVERTERS, **contraction.CONVERTERS,
    **indexing.CONVERTERS, **sorting.CONVERTERS, **control_flow.CONVERTERS, **fft.CONVERTERS,
    **linalg.CONVERTERS,  # after control_flow: its custom_call takes the LAPACK targets, then defers
}

# Ops the walk handles itself: terminators, and the functions it reads.
STRUCTURAL = ("func.func", "func.return", "stablehlo.return")


def problems(module: ir.Operation) -> list[UnsupportedStablehloError]:
    """An error for each op in the module's functions that has no converter (or, for a
    custom_call, a target the importer does not know), in program order."""
    found: list[UnsupportedStablehloError] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        op = op.operation
        name = op.name
        if name in STRUCTURAL or name == "builtin.module" or _outside_functions(op):
            return ir.WalkResult.ADVANCE
        if name not in CONVERTERS:
            found.append(UnsupportedStablehloError(f"{name}: mlax has no counterpart of this op",
                                                   op.location))
        elif name == "stablehlo.custom_call":
            target = attribute(op, "call_target_name")
            target_name = ir.StringAttr(target).value if target is not None else "?"
            if not linalg.known_target(target_name):
                found.append(UnsupportedStablehloError(
                    f"{name}: the custom call target '{target_name}' (foreign code mlax cannot see into)",
                    op.location))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _outside_functions(op: ir.Operation) -> bool:
    """Module-level ops other than functions (``sdy.mesh``...) are not part of any program."""
    parent = op.parent
    return parent is not None and parent.operation.name == "builtin.module" and op.name != "func.func"


def check_supported(module: ir.Operation) -> None:
    """Raise the first problem (located), mentioning how many others there are."""
    found = problems(module)
    if found:
        first = found[0]
        if len(found) > 1:
            others = sorted({p.summary.split(":")[0] for p in found[1:]})
            raise UnsupportedStablehloError(f"{first.summary} (and {len(found) - 1} more unsupported: "
                                            f"{', '.join(others)})", first.location)
        raise first


def import_table() -> list[tuple[str, str]]:
    """(StableHLO op, what it becomes in mlax) for every op the importer takes, sorted."""
    return sorted((name, entry.target) for name, entry in CONVERTERS.items())
