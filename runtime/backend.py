"""Backends: compile an mlax module's entry function into a callable on NumPy buffers.

A backend implements one small interface; jit picks one by name (``backend=``). The
compiled callables are kept in one process-wide cache (`compile_cached`), keyed by the
program as it prints without locations: re-jitting a function, or jitting an equal one,
skips the compiler. The cache is bounded (``config.compile_cache_size``) and owns the
executables, so evicting one frees it (jit entries only hold weak references).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from mlir import ir

from mlax.caching import LRUCache
from mlax.configuration import config
from mlax.dialect import get_context

# Called on NumPy buffers (or, where it has ``takes_device_buffers``, on mlax Arrays too);
# returns NumPy buffers or device buffers.
Executable = Callable[[Sequence[Any]], list[Any]]


class Backend(Protocol):
    name: str
    # The stages `Lowered.as_text` offers after "mlax" (each backend names its own road).
    stages: tuple[str, ...]

    def compile(self, module: ir.Module, entry: str, donated: tuple[int, ...] = ()) -> Executable: ...

    def stage_text(self, module: ir.Module, entry: str, stage: str, debug_info: bool,
                   donated: tuple[int, ...] = ()) -> str: ...


class InterpreterBackend:
    """The dialect's NumPy reference semantics: slow, exact, always available."""

    name = "interpreter"
    stages = ()

    def compile(self, module: ir.Module, entry: str, donated: tuple[int, ...] = ()) -> Executable:
        from mlax.dialect.transforms import transform_declarations
        from mlax.passes.pipeline import run_pipeline
        from mlax.runtime.interpreter import Interpreter

        if any(True for _ in transform_declarations(module)):  # derivatives get their bodies first
            with module.context:
                module = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
                run_pipeline(module, "mlax-expand-transforms, mlax-simulate-devices")
        return Interpreter(module).program(entry)

    def stage_text(self, module: ir.Module, entry: str, stage: str, debug_info: bool,
                   donated: tuple[int, ...] = ()) -> str:
        raise AssertionError("the interpreter has no stages")


class CpuBackend:
    """Native code for the host CPU (mlax.runtime.cpu), built on first use."""

    name = "cpu"

    @property
    def stages(self) -> tuple[str, ...]:
        from mlax.passes.cpu_pipeline import STAGE_NAMES

        return STAGE_NAMES

    def compile(self, module: ir.Module, entry: str, donated: tuple[int, ...] = ()) -> Executable:
        from mlax.runtime.cpu import CpuExecutable

        return CpuExecutable(module, entry)

    def stage_text(self, module: ir.Module, entry: str, stage: str, debug_info: bool,
                   donated: tuple[int, ...] = ()) -> str:
        from mlax.runtime.cpu import lower_for_cpu

        with module.context:
            lower_for_cpu(module, to=stage, entry=entry)
        return module.operation.get_asm(enable_debug_info=debug_info)


class XlaBackend:
    """XLA through jaxlib's PJRT client (mlax.runtime.xla) on one device of ``platform``: the
    first platform present (GPU or TPU before the CPU, as JAX picks) when None; a partitioned
    program (`mlax-partition`) runs on the devices of its mesh instead."""

    @property
    def stages(self) -> tuple[str, ...]:
        """`mlax-stablehlo-pipeline`'s named stages, then XLA's optimized "hlo"."""
        from mlax.runtime.xla import stage_names

        return (*stage_names(), "hlo")

    def __init__(self, name: str, platform: str | None = None, device_id: int | None = None) -> None:
        self.name = name
        self.platform = platform
        self.device_id = device_id

    @property
    def device(self) -> Any:
        from mlax.runtime import pjrt

        found = pjrt.devices(self.platform)
        if self.device_id is None:
            return found[0]
        return next(d for d in found if d.id == self.device_id)

    def compile(self, module: ir.Module, entry: str, donated: tuple[int, ...] = ()) -> Executable:
        from mlax.runtime.xla import XlaExecutable

        return XlaExecutable(module, entry, self.device, donated)

    def stage_text(self, module: ir.Module, entry: str, stage: str, debug_info: bool,
                   donated: tuple[int, ...] = ()) -> str:
        if stage == "hlo":
            return compile_cached(self.name, module, entry, donated).optimized_hlo()
        from mlax.runtime.xla import lower_for_xla, module_text

        lowered, _ = lower_for_xla(module, entry, donated, to=stage)
        return module_text(lowered, debug_info)


class GpuBackend:
    """Native kernels for NVIDIA GPUs (mlax.runtime.gpu): every stage lowers anywhere, running
    needs the CUDA driver; results stay in device memory until read, and a device-resident
    argument is passed where it is."""

    name = "gpu"

    @property
    def stages(self) -> tuple[str, ...]:
        from mlax.passes.gpu_pipeline import STAGE_NAMES

        return STAGE_NAMES

    def compile(self, module: ir.Module, entry: str, donated: tuple[int, ...] = ()) -> Executable:
        from mlax.runtime.gpu import GpuExecutable

        return GpuExecutable(module, entry)

    def stage_text(self, module: ir.Module, entry: str, stage: str, debug_info: bool,
                   donated: tuple[int, ...] = ()) -> str:
        from mlax.runtime.gpu import lower_for_gpu

        with module.context:
            lower_for_gpu(module, to=stage, entry=entry)
        return module.operation.get_asm(enable_debug_info=debug_info)


BACKENDS: dict[str, Backend] = {"interpreter": InterpreterBackend(), "cpu": CpuBackend(),
                                "xla": XlaBackend("xla"), "gpu": GpuBackend()}
# JAX's platform names choose XLA on that platform ("cpu" and "gpu" are mlax's native backends).
XLA_PLATFORMS = ("cuda", "rocm", "tpu")


def device_backend(device: Any) -> str:
    """The name of the XLA backend bound to one device (``jit(f, device=d)``)."""
    name = f"xla:{device.platform}:{device.id}"
    BACKENDS.setdefault(name, XlaBackend(name, device.platform, device.id))
    return name


def get_backend(name: str) -> Backend:
    """The backend ``name``: interpreter, cpu, xla, or an XLA platform present here."""
    backend = BACKENDS.get(name)
    if backend is not None:
        return backend
    if name in XLA_PLATFORMS:
        from mlax.runtime import pjrt

        if name in pjrt.platforms():
            return BACKENDS.setdefault(name, XlaBackend(name, name))
    raise ValueError(f"Unknown backend {name}. Available backends are {available_backends()}")


def available_backends() -> list[str]:
    from mlax.runtime import pjrt

    present = [p for p in XLA_PLATFORMS if p in pjrt.platforms()]
    return sorted({*(name for name in BACKENDS if ":" not in name), *present})


_COMPILED: LRUCache[Executable] = LRUCache(lambda: config.compile_cache_size)


def _in_this_thread(module: ir.Module) -> ir.Module:
    """``module`` in this thread's MLIR context (a copy when another thread traced it): an
    MLIR context is never used by two threads at once."""
    context = get_context()
    if module.context == context:
        return module
    return ir.Module.parse(module.operation.get_asm(enable_debug_info=True), context)


def compile_cached(backend: str, module: ir.Module, entry: str, donated: tuple[int, ...] = ()) -> Executable:
    """The executable of ``module``'s ``entry`` on ``backend`` (``donated`` arguments may be
    reused for results where the backend can): compiled once per program (concurrent first
    calls wait for one compile), then shared. With ``MLAX_DUMP_DIR`` set every call
    compiles, so that its passes are dumped."""
    key = (backend, module.operation.get_asm(enable_debug_info=False), entry, donated)

    def compile_program() -> Executable:
        return get_backend(backend).compile(_in_this_thread(module), entry, donated)

    if config.dump_dir:
        return _COMPILED.put(key, compile_program())
    return _COMPILED.get_or_create(key, compile_program)


def clear_compile_cache() -> None:
    """Drop every compiled program of every backend (``mlax.clear_caches``); jit entries hold
    them weakly, so their next call compiles again."""
    _COMPILED.clear()
