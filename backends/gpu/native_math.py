"""`mlax-gpu-native-math`: libdevice calls the PTX instruction set has an instruction for
become LLVM intrinsics again.

``convert-gpu-to-nvvm`` turns every math op of a kernel into a call of CUDA's libdevice
(``__nv_fabsf``, ``__nv_sqrtf``...), a bitcode library this build does not link (PTX made
with ``format=isa`` needs no CUDA installation): such a call would stay an unresolved
``.extern`` in the PTX and the driver would refuse the module. The functions below are single
PTX instructions (``abs`` of floats and integers, ``sqrt.rn``, ``cvt.rmi``, ``fma.rn``...) that
LLVM's NVPTX backend selects for the intrinsic, with the same results, so the call becomes that
intrinsic (and the declaration goes when unused). Everything else that needs libdevice (sin,
exp, fmod... which mlax's polynomial approximations mostly replace before) is refused by
`mlax-check-gpu-mapped`.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import nested_ops

_INTRINSICS = {"fabs": "fabs", "sqrt": "sqrt", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
               "rint": "roundeven", "nearbyint": "roundeven", "round": "round", "copysign": "copysign",
               "fma": "fma", "fmin": "minnum", "fmax": "maxnum"}


# Integer functions: libdevice name -> (intrinsic, its properties). INT_MIN stays INT_MIN, as
# on the CPU (two's complement wrap), so abs may not treat it as poison.
_INTEGER_INTRINSICS = {"abs": "abs", "llabs": "abs"}
_PROPERTIES = {"abs": {"is_int_min_poison": "false"}}


def _intrinsic(callee: str) -> str | None:
    """The llvm.intr op for a libdevice function (``__nv_fabsf`` and ``__nv_fabs``), or None."""
    if not callee.startswith("__nv_"):
        return None
    name = callee.removeprefix("__nv_")
    if name in _INTEGER_INTRINSICS:
        return f"llvm.intr.{_INTEGER_INTRINSICS[name]}"
    base = _INTRINSICS.get(name) or (_INTRINSICS.get(name[:-1]) if name.endswith("f") else None)
    return f"llvm.intr.{base}" if base else None


@register_pass
@dataclass
class GpuNativeMath(ModulePass):
    """Kernel calls of libdevice functions that are one PTX instruction -> LLVM intrinsics."""

    argument = "mlax-gpu-native-math"
    sees_mlax_ops = False
    summary = "turn kernel calls of libdevice functions that are one PTX instruction into LLVM intrinsics"

    def run(self, module: ir.Operation) -> None:
        declarations = []
        for op in nested_ops(module):
            if op.name == "llvm.func" and op.parent.name == "gpu.module" and not op.regions[0].blocks:
                declarations.append(op)
            elif op.name == "llvm.call" and "callee" in op.attributes:
                name = _intrinsic(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
                if name is not None:
                    with ir.InsertionPoint(op), op.location:
                        properties = {key: ir.Attribute.parse(value) for key, value in
                                      _PROPERTIES.get(name.removeprefix("llvm.intr."), {}).items()}
                        new = ir.Operation.create(name, results=[op.results[0].type],
                                                  operands=list(op.operands), attributes=properties)
                    op.results[0].replace_all_uses_with(new.results[0])
                    op.erase()
        for declaration in declarations:
            if _intrinsic(ir.StringAttr(declaration.attributes["sym_name"]).value) is not None:
                declaration.erase()
