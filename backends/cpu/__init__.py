"""The native CPU backend: `pipeline.py` (its stages and options, with its own passes beside
it), `executable.py` (ORC JIT code, `orc.py`; `disk_cache.py`). `CPU` declares it."""

from __future__ import annotations

from mlir import ir

from mlax.backends.declaration import Executable, NativeBackend
from mlax.passes.registry import PassPipeline


def _options() -> PassPipeline:
    from mlax.backends.cpu.executable import cpu_options

    return cpu_options()


def _executable(module: ir.Module, entry: str) -> Executable:
    from mlax.backends.cpu.executable import CpuExecutable

    return CpuExecutable(module, entry)


CPU = NativeBackend("cpu", _options, _executable)
