"""`mlax-gpu-noalias`: kernel buffer arguments say what they are: ``llvm.noalias`` and ``llvm.readonly``.

An outlined kernel takes its buffers as plain pointers; without a word on them LLVM must assume
any two may overlap, so a reduction's accumulator is stored back to memory at every step (a load
from another argument could read it) and nothing may go through the read-only data cache. The
host code says what each argument is: for every ``gpu.launch_func``, each buffer operand is traced
back through views to its allocation (`mlax.backends.gpu.vectorize.buffer_root`). Where that
allocation is a buffer of its own (a ``gpu.alloc``/``memref.alloc`` of host code, a constant
array's device copy, or an argument of the public function that the ABI marks ``llvm.noalias``,
backends/native/buffer_abi.py: the runtime's inputs and outputs never overlap a buffer that is written)
and no other buffer operand of the launch views the same allocation, the kernel's argument gets
``llvm.noalias``. Two views of one buffer (a slice and its source, two columns of one array) get
nothing. An argument the kernel only reads (loads and views, no store, no other use) also gets
``llvm.readonly``; with ``noalias`` that lets NVPTX read it through the non-coherent cache
(``ld.global.nc``). A kernel launched more than once gets an attribute only where every launch
proves it. ``convert-gpu-to-nvvm`` carries both attributes to the kernel's LLVM function.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from mlax.backends.gpu.device_buffers import host_ops
from mlax.backends.gpu.vectorize import VIEWS, buffer_root
from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import nested_ops

# Uses of a kernel's buffer argument that only read it (views are followed).
_READS = ("memref.load", "vector.load", "vector.transfer_read", "vector.maskedload", "memref.dim")


def _own_allocation(root: ir.Value) -> bool:
    """Whether ``root`` (a `buffer_root`) is memory no other allocation or argument overlaps."""
    if isinstance(root, ir.BlockArgument):
        function = root.owner.owner.operation
        if "arg_attrs" not in function.attributes:
            return False
        attributes = ir.ArrayAttr(function.attributes["arg_attrs"])[root.arg_number]
        return "llvm.noalias" in ir.DictAttr(attributes)
    # Not memref.get_global: two of one global are one buffer (device copies come before this pass).
    return root.owner.operation.name in ("gpu.alloc", "memref.alloc")


def _distinct(operands: list[ir.Value]) -> list[bool]:
    """For each operand of a launch: whether it is a buffer no other operand overlaps."""
    roots = [buffer_root(v) if isinstance(v.type, ir.MemRefType) else None for v in operands]
    return [root is not None and _own_allocation(root) and sum(r == root for r in roots if r is not None) == 1
            for root in roots]


def _read_only(argument: ir.Value) -> bool:
    """Whether the kernel only reads through ``argument`` (views of it included)."""
    pending = [argument]
    while pending:
        for use in pending.pop().uses:
            op = use.owner.operation
            if op.name in VIEWS and use.operand_number == 0:
                pending.extend(op.results)
            elif op.name not in _READS:
                return False
    return True


@register_pass
@dataclass
class GpuNoalias(ModulePass):
    """llvm.noalias / llvm.readonly on kernel buffer arguments proved distinct / only read."""

    argument = "mlax-gpu-noalias"
    sees_mlax_ops = False
    summary = "mark kernel buffer arguments noalias when the host code proves them distinct allocations"

    def run(self, module: ir.Operation) -> None:
        kernels = {}
        for op in nested_ops(module):
            if op.name == "gpu.func" and "gpu.kernel" in op.attributes:
                outer = ir.StringAttr(op.parent.attributes["sym_name"]).value
                kernels[(outer, ir.StringAttr(op.attributes["sym_name"]).value)] = op
        proved: dict[tuple[str, str], list[bool]] = {}
        for op in host_ops(module):
            if op.name == "gpu.launch_func":
                key = tuple(ir.SymbolRefAttr(op.attributes["kernel"]).value)
                distinct = _distinct(list(op.opview.kernelOperands))
                proved[key] = [a and b for a, b in zip(proved.get(key, distinct), distinct, strict=True)]
        for key, distinct in proved.items():
            kernel = kernels.get(key)
            if kernel is not None:
                _mark(kernel, distinct)


def _mark(kernel: ir.Operation, distinct: list[bool]) -> None:
    """Add llvm.noalias (and llvm.readonly where only read) to the kernel arguments proved distinct."""
    # The entry block's first arguments are the kernel's; workgroup and private buffers follow.
    arguments = list(kernel.regions[0].blocks[0].arguments)[:len(distinct)]
    old = ir.ArrayAttr(kernel.attributes["arg_attrs"]) if "arg_attrs" in kernel.attributes else None
    attributes = [{a.name: a.attr for a in ir.DictAttr(old[i])} if old else {} for i in range(len(arguments))]
    for argument, noalias, names in zip(arguments, distinct, attributes, strict=True):
        if noalias:
            names["llvm.noalias"] = ir.UnitAttr.get()
            if _read_only(argument):
                names["llvm.readonly"] = ir.UnitAttr.get()
    kernel.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in attributes])
