"""Backends: compile an mlax module's entry function into a callable on NumPy buffers.

A backend implements one small interface; jit picks one by name (``backend=``) and
keeps the compiled callable in its cache entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
from mlir import ir

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
        from mlax.runtime.cpu import compile_cached

        return compile_cached(module, entry)


BACKENDS: dict[str, Backend] = {"interpreter": InterpreterBackend(), "cpu": CpuBackend()}


def get_backend(name: str) -> Backend:
    try:
        return BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; available: {sorted(BACKENDS)}") from None
