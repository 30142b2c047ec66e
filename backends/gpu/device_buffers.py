"""`mlax-gpu-device-buffers`: the host code's buffers live in device memory.

After kernel outlining only kernels touch buffer contents, so each ``memref.alloc`` of host
code (a temporary between two kernels) becomes a ``gpu.alloc`` and its ``memref.dealloc`` a
``gpu.dealloc`` (made asynchronous by ``gpu-async-region`` in the ``nvvm`` stage: MLIR lowers
only the asynchronous form of ``gpu.dealloc``); a ``memref.copy`` between buffers (a loop's
carry handed on) becomes a ``gpu.memcpy``; a constant array (``memref.get_global``, in host
memory) is copied into a device buffer where it is taken, freed at the end of that block. The
function's arguments and results are already device buffers the runtime owns. Buffers
allocated inside kernels are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import gpu

from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import nested_ops


def host_ops(module: ir.Operation) -> list[ir.Operation]:
    """The ops of ``module`` outside its ``gpu.module``s (the code that runs on the host)."""
    kernels = {op for op in nested_ops(module) if op.name == "gpu.module"}
    found = []
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op not in kernels:
            found.append(op)
            found.extend(nested_ops(op))
    return found


@register_pass
@dataclass
class GpuDeviceBuffers(ModulePass):
    """Host memref.alloc/dealloc -> gpu.alloc/dealloc (temporaries live on the device)."""

    argument = "mlax-gpu-device-buffers"
    sees_mlax_ops = False
    summary = "put the host code's temporaries, copies and constant arrays in device memory"

    def run(self, module: ir.Operation) -> None:
        for op in host_ops(module):
            if op.name == "memref.alloc":
                with ir.InsertionPoint(op), op.location:
                    device = gpu.alloc(op.results[0].type, None, [], list(op.operands), [])
                op.results[0].replace_all_uses_with(device)
                op.erase()
            elif op.name == "memref.dealloc":
                with ir.InsertionPoint(op), op.location:
                    gpu.dealloc(None, [], op.operands[0])
                op.erase()
            elif op.name == "memref.copy":
                with ir.InsertionPoint(op), op.location:
                    gpu.memcpy(None, [], op.operands[1], op.operands[0])
                op.erase()
            elif op.name == "memref.get_global":
                _copy_to_device(op)


def _copy_to_device(op: ir.Operation) -> None:
    """Replace the host array ``op`` takes by a device copy, freed before the block ends."""
    host = op.results[0]
    with ir.InsertionPoint.after(op), op.location:
        device = gpu.alloc(host.type, None, [], [], [])
    host.replace_all_uses_with(device)
    with ir.InsertionPoint.after(device.owner), op.location:
        gpu.memcpy(None, [], device, host)
    with ir.InsertionPoint(op.block.operations[len(op.block.operations) - 1]), op.location:
        gpu.dealloc(None, [], device)
