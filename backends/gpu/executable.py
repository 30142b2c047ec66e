"""The native GPU backend: `mlax-gpu-pipeline` (backends/gpu/pipeline.py) compiles a program to
the ahead-of-time artifact's form (backends/gpu/artifact.py: a launch plan and PTX for this
device's chip), which runs through our own driver-API runtime (backends/gpu/loader.py: ctypes
over ``libcuda.so.1``), the same code that runs a saved artifact.

Every stage lowers on any machine (``jit(f, backend="gpu").lower(x).as_text("binary")`` holds
the PTX); only compiling for a run needs the driver, and without one it raises a RuntimeError
that names the backends that do run here.

Results stay on the device: a call returns `DeviceBuffer`s (mlax Arrays hold them as their
device buffer) and waits for nothing; the device's one stream orders every kernel, copy,
allocation and free. Such an array passed to another gpu-jitted program is read where it is;
NumPy and host arrays are uploaded for the call. It comes to the host when it is read
(``np.asarray``, printing, ``block_until_ready``, a CPU op), and its device memory is freed
when it dies.

UNTESTED ON A GPU (none was lent when this was written): tests/backends/gpu/test_runtime.py runs it
against a stand-in driver that records every call but runs no kernel.
"""

from __future__ import annotations

import ctypes
import functools
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
from mlir import ir

from mlax.backends.gpu.artifact import module_artifact
from mlax.backends.gpu.loader import LIBRARY, CudaError, Device, DeviceBuffer, GpuProgram
from mlax.dialect.tensor_spec import TensorSpec

NO_DRIVER = "no CUDA driver/GPU on this machine: use backend='cpu' or 'xla'"
DRIVER = LIBRARY  # the CUDA driver library the JIT runs through (tests point it at a stand-in)


@functools.cache
def cuda_driver() -> ctypes.CDLL | None:
    """The CUDA driver library, or None where it cannot be loaded (no NVIDIA driver here)."""
    try:
        return ctypes.CDLL(LIBRARY)
    except OSError:
        return None


def gpu_device() -> Device:
    """The GPU that gpu-jitted programs run on (device 0 of `DRIVER`): the backend's
    RuntimeError where there is none."""
    try:
        return Device.get(0, library=DRIVER)
    except CudaError as error:
        raise RuntimeError(NO_DRIVER) from error


class GpuExecutable:
    """One compiled entry function as a `GpuProgram` on `gpu_device`, called on device buffers
    (its own pass as they are, others are read), jax Arrays or host buffers; returns
    `DeviceBuffer`s (see the module's note)."""

    takes_device_buffers = True

    def __init__(self, module: ir.Module, entry: str) -> None:
        device = gpu_device()
        with module.context:
            copy = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
            function = next(op for op in copy.body.operations
                            if op.operation.name == "func.func" and op.sym_name.value == entry)
            signature = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
            self._inputs = [(s.shape, s.dtype) for s in map(TensorSpec.from_mlir, signature.inputs)]
            self._outputs = [(s.shape, s.dtype) for s in map(TensorSpec.from_mlir, signature.results)]
            artifact = module_artifact(copy, entry, chip=device.chip)
        self.program = GpuProgram(artifact, device.id, device.cuda, own_io=False)
        # Evicted from the compile cache and unreferenced: its modules and temporaries go.
        weakref.finalize(self, self.program.close).atexit = False

    def __call__(self, inputs: Sequence[Any]) -> list[DeviceBuffer]:
        device = self.program.device
        buffers = []  # an upload is freed (in stream order, after the kernels) when the call returns
        for x, (shape, dtype) in zip(inputs, self._inputs, strict=True):
            buffer = x
            if not (isinstance(buffer, DeviceBuffer) and buffer.device is device):
                host = np.asarray(x, dtype, order="C")  # no copy of a host buffer of its dtype; rank 0 kept
                buffer = DeviceBuffer(device, device.alloc(host.nbytes), shape, dtype)
                device.upload(buffer.pointer, host)
            buffers.append(buffer)
        outputs = self.program.run([buffer.pointer for buffer in buffers])
        return [DeviceBuffer(device, pointer, shape, dtype)
                for pointer, (shape, dtype) in zip(outputs, self._outputs, strict=True)]
