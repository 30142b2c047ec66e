"""The native GPU backend: `mlax-gpu-pipeline` (passes/gpu_pipeline.py), then the host code in
MLIR's ExecutionEngine with ``libmlir_cuda_runtime.so``, which loads the PTX kernels through the
CUDA driver (``libcuda.so.1``) and launches them.

Every stage lowers on any machine (``jit(f, backend="gpu").lower(x).as_text("binary")`` holds
the PTX); only compiling for a run needs the driver, and without one it raises a RuntimeError
that names the backends that do run here.

UNTESTED ON A GPU (none was lent when this was written; tests/gpu runs it against a stand-in
driver that records module loads and launches): `GpuExecutable` is the smallest correct run
path, not the fast one. Each call creates a stream, allocates device buffers for
the inputs and the outputs, copies the inputs in, runs the entry (whose kernels go on the
stream), copies the outputs back and frees everything. Device-resident arrays, one stream
across calls and the ahead-of-time artifact are later work (docs/gpu.md).
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Sequence
from pathlib import Path

import mlir
import numpy as np
from mlir import ir

from mlax.dialect.tensor_spec import TensorSpec
from mlax.passes.buffer_abi import entry_symbol
from mlax.runtime.dumping import lower

NO_DRIVER = "no CUDA driver/GPU on this machine: use backend='cpu' or 'xla'"
CUDA_RUNTIME = Path(mlir.__path__[0]) / "lib" / "libmlir_cuda_runtime.so"


def gpu_pipeline_text(to: str = "binary") -> str:
    return f"mlax-gpu-pipeline{{to={to}}}"


def lower_for_gpu(module: ir.Module, to: str = "binary", entry: str = "main") -> None:
    """Run the GPU pipeline on ``module`` in place, writing the IR after every pass to
    ``config.dump_dir`` (``MLAX_DUMP_DIR``) when it is set."""
    lower(module, gpu_pipeline_text(to), entry)


@functools.cache
def cuda_driver() -> ctypes.CDLL | None:
    """The CUDA driver library, or None where it cannot be loaded (no NVIDIA driver here)."""
    try:
        return ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
    except OSError:
        return None


def require_driver() -> None:
    """Raise the backend's RuntimeError unless the CUDA driver can be loaded."""
    if cuda_driver() is None:
        raise RuntimeError(NO_DRIVER)


@functools.cache
def _runtime() -> ctypes.CDLL:
    """MLIR's CUDA runtime wrappers (mgpu*), bound for the buffer transfers done here."""
    library = ctypes.CDLL(str(CUDA_RUNTIME), mode=ctypes.RTLD_GLOBAL)
    void_p, u64 = ctypes.c_void_p, ctypes.c_uint64
    for name, restype, argtypes in (("mgpuStreamCreate", void_p, []),
                                    ("mgpuStreamSynchronize", None, [void_p]),
                                    ("mgpuStreamDestroy", None, [void_p]),
                                    ("mgpuMemAlloc", void_p, [u64, void_p, ctypes.c_bool]),
                                    ("mgpuMemFree", None, [void_p, void_p]),
                                    ("mgpuMemcpy", None, [void_p, void_p, ctypes.c_size_t, void_p])):
        function = getattr(library, name)
        function.restype, function.argtypes = restype, argtypes
    return library


class GpuExecutable:
    """One compiled entry function on the GPU, callable on NumPy inputs (see the module's note)."""

    def __init__(self, module: ir.Module, entry: str) -> None:
        require_driver()
        from mlir.execution_engine import ExecutionEngine

        with module.context:
            lowered = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
            function = next(op for op in lowered.body.operations
                            if op.operation.name == "func.func" and op.sym_name.value == entry)
            function_type = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
            self._outputs = [(s.shape, s.dtype) for s in map(TensorSpec.from_mlir, function_type.results)]
            lower_for_gpu(lowered, entry=entry)
            self._engine = ExecutionEngine(lowered, opt_level=3, shared_libs=[str(CUDA_RUNTIME)])
            self._engine.initialize()  # the global constructors load the kernels' modules
        self._function = self._engine.raw_lookup(entry_symbol(entry))

    def __call__(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        rt = _runtime()
        stream = rt.mgpuStreamCreate()
        hosts = [np.ascontiguousarray(a) for a in inputs] + [np.empty(s, d) for s, d in self._outputs]
        devices = [rt.mgpuMemAlloc(max(a.nbytes, 1), stream, False) for a in hosts]
        try:
            for host, device in zip(hosts[:len(inputs)], devices[:len(inputs)], strict=True):
                rt.mgpuMemcpy(device, host.ctypes.data, host.nbytes, stream)
            pointers = [ctypes.c_void_p(d) for d in devices]
            packed = (ctypes.c_void_p * len(pointers))(*[ctypes.addressof(p) for p in pointers])
            ctypes.CFUNCTYPE(None, ctypes.c_void_p)(self._function)(packed)
            for host, device in zip(hosts[len(inputs):], devices[len(inputs):], strict=True):
                rt.mgpuMemcpy(host.ctypes.data, device, host.nbytes, stream)
            rt.mgpuStreamSynchronize(stream)
        finally:
            for device in devices:
                rt.mgpuMemFree(device, stream)
            rt.mgpuStreamDestroy(stream)
        return hosts[len(inputs):]
