"""`mlax-lower-to-stablehlo`: mlax ops in func.func bodies -> StableHLO ops (generic form).

One rule per op name (RULES): an op with a ``stablehlo`` trait (dialect/registry.py) is renamed
to the op it names (renamings.py), and the family modules, grouped as in
`lower_to_linalg/`, hold the other rules and replace a renaming where some operand types need
more (complex max/min, unsigned sign, integer pow). A rule builds the replacement at the op,
in the op's own types, and returns the value that takes over its result. Calls of
control-flow declarations become `stablehlo.case`/`stablehlo.while` whose regions call the
branch and body functions (control_flow.py), and calls of host callbacks custom calls of the runtime's target
(callbacks.py); `func.func`, `func.call` and `func.return` stay, as XLA reads them. The
transformation declarations must be resolved first (`mlax-expand-transforms`, which the
XLA backend's `mlax-stablehlo-pipeline` runs: backends/xla/pipeline.py). The stablehlo
dialect is not registered in mlax's context, so the context must allow unregistered dialects
(mlax-opt allows them for pipelines that produce or read StableHLO); XLA parses the printed
text itself. An mlax op without a rule fails the pass with an error at the op's location naming it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from mlax.dialect.callbacks import CALLBACK_KIND
from mlax.dialect.control_flow import CONTROL_FLOW_KINDS
from mlax.dialect.transforms import transform_declarations
from mlax.passes.lower_to_stablehlo import (
    collectives,
    complex_parts,
    contraction,
    convert,
    decompositions,
    decompositions_spectral,
    eig,
    elementwise,
    fft,
    householder,
    indexing,
    reductions,
    schur,
    shape,
    sorting,
    structural,
    windowed,
)
from mlax.passes.lower_to_stablehlo.callbacks import lower_callbacks
from mlax.passes.lower_to_stablehlo.common import Rule, fail
from mlax.passes.lower_to_stablehlo.control_flow import lower_control_flow
from mlax.passes.lower_to_stablehlo.renamings import renaming_rules
from mlax.passes.op_rules import lower_mlax_ops
from mlax.passes.registry import ModulePass, PassFailure, register_pass

RULES: dict[str, Rule] = {**renaming_rules(), **elementwise.RULES, **complex_parts.RULES,
                          **convert.RULES, **structural.RULES, **shape.RULES,
                          **reductions.RULES, **contraction.RULES, **indexing.RULES,
                          **windowed.RULES, **sorting.RULES, **collectives.RULES,
                          **decompositions.RULES, **decompositions_spectral.RULES, **eig.RULES,
                          **fft.RULES, **householder.RULES, **schur.RULES}


@register_pass
@dataclass
class LowerToStablehlo(ModulePass):
    """Rewrite mlax ops and control-flow calls inside func.func bodies into StableHLO."""

    argument = "mlax-lower-to-stablehlo"
    summary = "lower mlax ops and control flow to StableHLO (generic form; XLA parses the text)"

    def run(self, module: ir.Operation) -> None:
        for declaration, transform in transform_declarations(module):
            if transform.kind not in (*CONTROL_FLOW_KINDS, CALLBACK_KIND):
                raise PassFailure(f"mlax-lower-to-stablehlo: the {transform.kind} declaration "
                                  f"@{transform.name} must be resolved first (run "
                                  "mlax-expand-transforms)", declaration.location)
        if not module.context.allow_unregistered_dialects:
            raise PassFailure("mlax-lower-to-stablehlo: the stablehlo dialect is unregistered "
                              "here; the context must allow unregistered dialects "
                              "(mlax.dialect.make_context(allow_unregistered_dialects=True))")
        lower_callbacks(module)
        lower_control_flow(module)
        lower_mlax_ops(module, RULES, lambda op: fail(op, f"no StableHLO lowering for {op.name}"))
