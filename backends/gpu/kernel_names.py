"""`mlax-gpu-kernel-names`: outlined kernels get names PTX accepts.

`gpu-kernel-outlining` names a kernel after its host function (``jit.f`` → ``jit.f_kernel``),
and the entry's ``jit.`` prefix (backends/native/buffer_abi.py) is not a PTX identifier: ptxas and the
driver's JIT refuse ``.entry jit.f_kernel``. Each character outside ``[A-Za-z0-9_$]`` becomes
``_`` (a kernel name is unique within its own ``gpu.module``, one per kernel), and every
``gpu.launch_func`` is pointed at the new name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mlir import ir

from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import nested_ops

_NOT_PTX = re.compile(r"[^A-Za-z0-9_$]")


def ptx_name(name: str) -> str:
    """``name`` as a PTX identifier."""
    return _NOT_PTX.sub("_", name)


@register_pass
@dataclass
class GpuKernelNames(ModulePass):
    """Kernels renamed to PTX identifiers, with the launches that name them."""

    argument = "mlax-gpu-kernel-names"
    sees_mlax_ops = False
    summary = "rename outlined kernels to names PTX accepts (no '.')"

    def run(self, module: ir.Operation) -> None:
        renamed: dict[tuple[str, str], str] = {}
        for kernels in module.regions[0].blocks[0].operations:
            if kernels.operation.name != "gpu.module":
                continue
            outer = ir.StringAttr(kernels.attributes["sym_name"]).value
            for kernel in kernels.regions[0].blocks[0].operations:
                name = ir.StringAttr(kernel.attributes["sym_name"]).value
                if ptx_name(name) != name:
                    ir.SymbolTable.set_symbol_name(kernel, ptx_name(name))
                    renamed[(outer, name)] = ptx_name(name)
        for op in nested_ops(module):
            if op.name == "gpu.launch_func":
                key = tuple(ir.SymbolRefAttr(op.attributes["kernel"]).value)
                if key in renamed:
                    op.attributes["kernel"] = ir.SymbolRefAttr.get([key[0], renamed[key]])
