"""`mlax-import-stablehlo`: JAX's StableHLO -> mlax, so jax-written programs get mlax's passes.

One table (table.CONVERTERS, gathered from the family modules) maps each StableHLO op name
to a converter that calls `mlax.lax` on the op's operands; core.Importer walks a function
with it. `mlax.from_stablehlo` (pyfront/stablehlo_import.py) runs that walk whenever its
callable is called, eagerly or under a trace; this pass traces it once on the entry
function's argument types and replaces the module's functions by the traced mlax program,
keeping the entry's name. An op without a converter fails the pass with an error at its
location (every such op is reported). The stablehlo dialect is unregistered in mlax's
contexts: the context must allow unregistered dialects (mlax-opt allows them when the
pipeline includes this pass). Importing needs the front end (and jax); it is loaded only
when the pass runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from mlax.passes.registry import ModulePass, PassFailure, option, register_pass


def import_table() -> list[tuple[str, str]]:
    """(StableHLO op, its mlax counterpart) for every op the importer takes, for the docs."""
    from mlax.import_stablehlo.table import import_table as table

    return table()


@register_pass
@dataclass
class ImportStablehlo(ModulePass):
    """Rewrite a module of jax's StableHLO into mlax IR in place."""

    argument = "mlax-import-stablehlo"
    summary = "import jax's StableHLO (generic form) into mlax ops (the entry function keeps its name)"
    entry: str = option("main", "the function to import; the functions it calls come along")

    def run(self, module: ir.Operation) -> None:
        if not module.context.allow_unregistered_dialects:
            raise PassFailure("mlax-import-stablehlo: the stablehlo dialect is unregistered here; the "
                              "context must allow unregistered dialects (mlax-opt "
                              "--allow-unregistered-dialect)")
        from mlax.import_stablehlo.rewrite import import_module

        import_module(module, self.entry)
