"""`mlax-exact-libm-calls`: math ops that `convert-math-to-llvm` would compute inexactly become
libm calls first.

`convert-math-to-llvm` rewrites ``math.expm1`` as ``exp(x) - 1`` (all precision lost near 0:
expm1(1e-10) becomes 0) and, unless told otherwise, ``math.log1p`` as ``log(1 + x)``. Running
`convert-math-to-libm` before it is no answer: that pass turns *every* math op into a call,
including sqrt, floor or fabs, which LLVM otherwise lowers to vectorizable instructions. So
this pass calls libm for the listed ops only (scalars; vector operands are left alone).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func

from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.symbols import declare_function
from mlax.passes.walk import nested_ops

LIBM_NAMES = {"math.expm1": "expm1", "math.log1p": "log1p"}
_SUFFIX = {"f32": "f", "f64": ""}


@register_pass
@dataclass
class ExactLibmCalls(ModulePass):
    """Replace scalar f32/f64 math.expm1 and math.log1p by calls to libm's expm1/log1p."""

    argument = "mlax-exact-libm-calls"
    sees_mlax_ops = False
    summary = "call libm for math ops convert-math-to-llvm would compute inexactly (expm1, log1p)"

    def run(self, module: ir.Operation) -> None:
        for op in nested_ops(module):
            base = LIBM_NAMES.get(op.name)
            t = op.results[0].type if base else None
            if base is None or str(t) not in _SUFFIX:
                continue
            name = base + _SUFFIX[str(t)]
            declare_function(module, name, ir.FunctionType.get([t], [t]))
            with op.location, ir.InsertionPoint(op):
                call = func.CallOp([t], name, [op.operands[0]])
            op.results[0].replace_all_uses_with(call.result)
            op.erase()
