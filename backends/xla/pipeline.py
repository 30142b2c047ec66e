"""`mlax-stablehlo-pipeline`: the XLA backend's lowering, mlax -> StableHLO, in named stages.

XLA does the rest (fusion, layout, code generation): its optimized HLO is the backend's last
stage, "hlo" (`Lowered.as_text("hlo")`), printed by XLA rather than by a pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlax.passes.registry import PassPipeline, last_stage, register_pass

# "partitioned": transformations resolved, functions nothing calls any more dropped (an
# unbatched callee of a vmap may hold collectives only its vmap resolves), the per-device
# program over the module's mesh (`mlax-partition`; a module
# without a mesh passes through unchanged), then its StableHLO.
STABLEHLO_STAGES: tuple[tuple[str, str], ...] = (
    ("partitioned", "mlax-expand-transforms, symbol-dce, mlax-cleanup, mlax-partition"),
    ("stablehlo", "mlax-lower-to-stablehlo"),
)


@register_pass
@dataclass(frozen=True)
class StablehloPipeline(PassPipeline):
    """The XLA backend's lowering: transformations resolved, then mlax -> StableHLO."""

    argument = "mlax-stablehlo-pipeline"
    summary = "lower mlax to StableHLO for XLA"
    STAGES = STABLEHLO_STAGES

    to: str = last_stage(STABLEHLO_STAGES)
