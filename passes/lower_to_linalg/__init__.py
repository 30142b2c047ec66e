"""`mlax-lower-to-linalg`: mlax ops in func.func bodies -> linalg/tensor/arith/math on tensors.

One rule per op name (RULES, gathered from the family modules); a rule builds the
replacement at the op, in the op's own types, and returns the value that takes over its
result. Unsigned types therefore survive the rules (they choose divui, cmpi ult, ...) and
are retyped to signless once at the end (signless.py). An mlax op without a rule fails the
pass with an error at the op's location naming it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from mlax.passes.lower_to_linalg import (
    collectives,
    complex_parts,
    composite,
    contraction,
    convert,
    decompositions,
    decompositions_spectral,
    dynamic,
    eig,
    elementwise,
    fft,
    householder,
    indexing,
    reductions,
    scan,
    schur,
    shape,
    sorting,
    structural,
    windowed,
)
from mlax.passes.lower_to_linalg.common import Rule, fail
from mlax.passes.lower_to_linalg.signless import make_signless
from mlax.passes.op_rules import lower_mlax_ops
from mlax.passes.registry import ModulePass, register_pass

RULES: dict[str, Rule] = {**elementwise.RULES, **complex_parts.RULES,
                          **composite.RULES, **convert.RULES, **structural.RULES,
                          **shape.RULES, **dynamic.RULES, **reductions.RULES, **contraction.RULES,
                          **scan.RULES, **windowed.RULES, **indexing.RULES,
                          **sorting.RULES, **collectives.RULES, **decompositions.RULES,
                          **decompositions_spectral.RULES, **eig.RULES, **fft.RULES,
                          **householder.RULES, **schur.RULES}


@register_pass
@dataclass
class LowerToLinalg(ModulePass):
    """Rewrite mlax ops inside func.func bodies into upstream linalg/tensor/arith/math ops."""

    argument = "mlax-lower-to-linalg"
    summary = "lower mlax ops in func.func bodies to linalg/tensor/arith/math on tensors"

    def run(self, module: ir.Operation) -> None:
        lower_mlax_ops(module, RULES, lambda op: fail(op, f"no lowering for {op.name} yet"))
        make_signless(module)
