"""`mlax-check-gpu-mapped`: fail, at the op's location, on what the GPU backend cannot run.

``convert-parallel-loops-to-gpu`` leaves a loop nest it cannot map on the host without a
word, and the host cannot read device memory: after the ``gpu`` stage, a ``scf.parallel``, a
linalg op or a load/store of a device buffer left in host code is an error (the loads of
control flow read host copies: `mlax-gpu-host-reads`), and so is a launch whose grid is over
CUDA's limits (65535 blocks along y and z). Calls of external functions (the LAPACK, BLAS and
FFT routines and the host-callback entry point the linalg stage calls) and OpenMP ops have no
GPU form either; with ``mapped=false`` (the end of the ``buffers`` stage) only those are
checked, so they are refused before any GPU lowering. In kernels, what would call CUDA's
libdevice (a float remainder, ``__nv_*`` functions) is refused too: PTX built without it
would not load. Each error names the op and points the user to the backends that run it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from mlax.backends.gpu.device_buffers import host_ops
from mlax.passes.registry import ModulePass, PassFailure, option, register_pass
from mlax.passes.walk import nested_ops

ADVICE = 'use backend="cpu" or backend="xla" for this program'
_MEMORY_OPS = ("memref.store", "memref.copy", "scf.parallel")


def _declarations(module: ir.Operation) -> set[str]:
    """The names of the module's external functions (declared, defined elsewhere)."""
    return {ir.StringAttr(op.attributes["sym_name"]).value for op in module.regions[0].blocks[0].operations
            if op.operation.name == "func.func" and len(op.regions[0].blocks) == 0}


def _problem(op: ir.Operation, external: set[str], mapped: bool) -> str | None:
    """Why ``op`` (host code) cannot run on the GPU backend, or None."""
    if op.name == "func.call":
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        if callee in external:
            return f"the GPU backend cannot call the library function @{callee} (func.call)"
    if op.name.startswith("omp."):
        return f"the GPU backend does not run OpenMP ops ({op.name})"
    if mapped and op.name == "gpu.launch_func":
        return _grid_problem(op.opview)
    if mapped and op.name == "memref.load" and not _host_buffer(op.operands[0]):
        return (f"{op.name} reads device memory on the host where mlax-gpu-host-reads could not copy it "
                "to the host (a load inside host code that also writes device memory)")
    if mapped and (op.name in _MEMORY_OPS or op.name.startswith("linalg.")):
        return f"{op.name} was not mapped to a GPU kernel and would touch device memory on the host"
    return None


def _host_buffer(value: ir.Value) -> bool:
    """A host ``memref.alloca`` (mlax-gpu-host-reads copies device bytes there before a load)."""
    return not isinstance(value.owner, ir.Block) and value.owner.operation.name == "memref.alloca"


def _constant(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.constant":
        return None
    return ir.IntegerAttr(owner.operation.attributes["value"]).value


def _grid_problem(launch: ir.OpView) -> str | None:
    """A grid dimension over CUDA's limit (2**31 - 1 blocks in x, 65535 in y and z)."""
    for axis, value, limit in (("x", launch.gridSizeX, 2**31 - 1), ("y", launch.gridSizeY, 65535),
                               ("z", launch.gridSizeZ, 65535)):
        blocks = _constant(value)
        if blocks is not None and blocks > limit:
            return (f"gpu.launch_func of {blocks} blocks along {axis} is over CUDA's limit of {limit} "
                    "(an array with too many rows for the GPU backend's 2-D/3-D grids)")
    return None


def _kernel_problem(op: ir.Operation, libdevice: bool) -> str | None:
    """Why ``op`` (in a kernel) cannot be compiled to PTX here, or None (a libdevice call is
    fine where the pipeline links libdevice)."""
    if op.name in ("arith.remf", "llvm.frem"):
        return (f"{op.name} (a floating-point remainder) needs CUDA's libdevice (fmod), "
                "which this build does not link")
    if op.name == "llvm.call" and "callee" in op.attributes:
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        if callee.startswith("__nv_") and not libdevice:
            return (f"{op.name} @{callee} needs CUDA's libdevice, which is not installed "
                    "(pip install 'mlax[gpu]': the nvidia-cuda-nvcc-cu12 wheel)")
    return None


def kernel_ops(module: ir.Operation) -> list[ir.Operation]:
    """The ops inside the module's ``gpu.module``s."""
    host = set(host_ops(module))
    return [op for op in nested_ops(module) if op not in host and op.name != "gpu.module"]


@register_pass
@dataclass
class CheckGpuMapped(ModulePass):
    """Refuse host code the GPU backend cannot run: library calls, OpenMP, unmapped loops."""

    argument = "mlax-check-gpu-mapped"
    sees_mlax_ops = False
    summary = "fail at ops the GPU backend cannot run (library calls, OpenMP, loops left on the host)"

    mapped: bool = option(True, "also require every loop nest and memory access to be in a kernel")
    libdevice: bool = option(False, "kernels may call CUDA's libdevice (__nv_*): the pipeline links it")

    def run(self, module: ir.Operation) -> None:
        external = _declarations(module)
        for op in host_ops(module):
            problem = _problem(op, external, self.mapped)
            if problem is not None:
                raise PassFailure(f"{problem}: {ADVICE}", op.location, NotImplementedError)
        for op in kernel_ops(module) if self.mapped else ():
            problem = _kernel_problem(op, self.libdevice)
            if problem is not None:
                raise PassFailure(f"{problem}: {ADVICE}", op.location, NotImplementedError)
