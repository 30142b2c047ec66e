"""Backends: compile an mlax module's entry function into a callable on NumPy buffers.

A backend implements one small interface; jit picks one by name (``backend=``). The
compiled callables are kept in one process-wide cache (`compile_cached`), keyed by the
program as it prints without locations: re-jitting a function, or jitting an equal one,
skips the compiler. The cache is bounded (``config.compile_cache_size``) and owns the
executables, so evicting one frees it (jit entries only hold weak references).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
from mlir import ir

from mlax.caching import LRUCache
from mlax.configuration import config
from mlax.dialect import get_context

Executable = Callable[[Sequence[np.ndarray]], list[np.ndarray]]


class Backend(Protocol):
    name: str

    def compile(self, module: ir.Module, entry: str) -> Executable: ...


class InterpreterBackend:
    """The dialect's NumPy reference semantics: slow, exact, always available."""

    name = "interpreter"

    def compile(self, module: ir.Module, entry: str) -> Executable:
        from mlax.dialect.transforms import transform_declarations
        from mlax.passes.pipeline import run_pipeline
        from mlax.runtime.interpreter import Interpreter

        if any(True for _ in transform_declarations(module)):  # derivatives get their bodies first
            with module.context:
                module = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
                run_pipeline(module, "mlax-expand-transforms")
        return Interpreter(module).program(entry)


class CpuBackend:
    """Native code for the host CPU (mlax.runtime.cpu), built on first use."""

    name = "cpu"

    def compile(self, module: ir.Module, entry: str) -> Executable:
        from mlax.runtime.cpu import CpuExecutable

        return CpuExecutable(module, entry)


BACKENDS: dict[str, Backend] = {"interpreter": InterpreterBackend(), "cpu": CpuBackend()}


def get_backend(name: str) -> Backend:
    try:
        return BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; available: {sorted(BACKENDS)}") from None


_COMPILED: LRUCache[Executable] = LRUCache(lambda: config.compile_cache_size)


def _in_this_thread(module: ir.Module) -> ir.Module:
    """``module`` in this thread's MLIR context (a copy when another thread traced it): an
    MLIR context is never used by two threads at once."""
    context = get_context()
    if module.context == context:
        return module
    return ir.Module.parse(module.operation.get_asm(enable_debug_info=True), context)


def compile_cached(backend: str, module: ir.Module, entry: str) -> Executable:
    """The executable of ``module``'s ``entry`` on ``backend``: compiled once per program
    (concurrent first calls wait for one compile), then shared. With ``MLAX_DUMP_DIR`` set
    every call compiles, so that its passes are dumped."""
    key = (backend, module.operation.get_asm(enable_debug_info=False), entry)

    def compile_program() -> Executable:
        return get_backend(backend).compile(_in_this_thread(module), entry)

    if config.dump_dir:
        return _COMPILED.put(key, compile_program())
    return _COMPILED.get_or_create(key, compile_program)
