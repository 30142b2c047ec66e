"""The native GPU backend for NVIDIA GPUs: `pipeline.py` (its stages and options, with the GPU
passes beside it), `executable.py` on `plan.py` and `loader.py`, `artifact.py` (ahead of time).
`GPU` declares it. Every stage lowers anywhere; running needs the CUDA driver. Results stay in
device memory until read, and a device-resident argument is passed where it is. The stages
print for the default chip; the executable compiles for its device's."""

from __future__ import annotations

from mlir import ir

from mlax.backends.declaration import Executable, NativeBackend
from mlax.backends.gpu.pipeline import GpuPipeline


def _executable(module: ir.Module, entry: str) -> Executable:
    from mlax.backends.gpu.executable import GpuExecutable

    return GpuExecutable(module, entry)


GPU = NativeBackend("gpu", GpuPipeline, _executable)
