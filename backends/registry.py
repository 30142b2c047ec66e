"""Backends: compile an mlax module's entry function into a callable on NumPy buffers.

Each backend is declared in its own folder (backends/declaration.py); jit picks one by name
(``backend=``). The
compiled callables are kept in one process-wide cache (`compile_cached`), keyed by the
program as it prints without locations: re-jitting a function, or jitting an equal one,
skips the compiler. The cache is bounded (``config.compile_cache_size``) and owns the
executables, so evicting one frees it (jit entries only hold weak references).
"""

from __future__ import annotations

from typing import Any

from mlir import ir

from mlax.backends.cpu import CPU
from mlax.backends.declaration import Backend, Executable
from mlax.backends.gpu import GPU
from mlax.backends.interpreter import InterpreterBackend
from mlax.backends.xla import XlaBackend
from mlax.caching import LRUCache
from mlax.configuration import config
from mlax.dialect import get_context

BACKENDS: dict[str, Backend] = {"interpreter": InterpreterBackend(), "cpu": CPU, "xla": XlaBackend("xla"),
                                "gpu": GPU}
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
        from mlax.backends.xla import pjrt

        if name in pjrt.platforms():
            return BACKENDS.setdefault(name, XlaBackend(name, name))
    raise ValueError(f"Unknown backend {name}. Available backends are {available_backends()}")


def available_backends() -> list[str]:
    from mlax.backends.xla import pjrt

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
    key = (backend, getattr(get_backend(backend), "options", None),
           module.operation.get_asm(enable_debug_info=False), entry, donated)

    def compile_program() -> Executable:
        return get_backend(backend).compile(_in_this_thread(module), entry, donated)

    if config.dump_dir:
        return _COMPILED.put(key, compile_program())
    return _COMPILED.get_or_create(key, compile_program)


def clear_compile_cache() -> None:
    """Drop every compiled program of every backend (``mlax.clear_caches``); jit entries hold
    them weakly, so their next call compiles again."""
    _COMPILED.clear()
