"""The CPU backend: `mlax-cpu-pipeline`, then LLVM at O3 in the process-wide JIT (runtime/orc.py),
called on NumPy buffers.

The compiled entry takes one bare pointer per buffer (inputs, then caller-allocated outputs;
see passes/cpu_pipeline.py), so a call is one ctypes call with the data pointers of the inputs
and of freshly allocated outputs: no state is shared between calls, and ctypes releases the GIL,
so threads calling one executable run in parallel. Inputs are never copied unless they are not
C-contiguous (they have the traced dtypes, see mlax.core.to_numpy). The machine code lives as
long as the executable, which the process-wide compile cache owns (runtime/backend.py).
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import mlir
import numpy as np
from mlir import ir

from mlax.configuration import config
from mlax.dialect.tensor_spec import TensorSpec
from mlax.passes.buffer_abi import entry_symbol
from mlax.passes.pipeline import reusable_stages, run_stage
from mlax.runtime import host_callbacks, orc
from mlax.runtime.blas import gemm_symbols
from mlax.runtime.dumping import run_dumped

_RUNTIME_LIBRARIES = ("libmlir_c_runner_utils.so",)


def _runtime_libraries() -> list[str]:
    lib = Path(mlir.__path__[0]) / "lib"
    found = [str(lib / name) for name in _RUNTIME_LIBRARIES if (lib / name).exists()]
    openmp = openmp_library()
    return found + ([openmp] if openmp else [])


@functools.cache
def openmp_library() -> str | None:
    """The OpenMP runtime the compiled code's ``__kmpc_*`` calls need: the intel-openmp wheel's
    libiomp5 (GNU libgomp does not implement them). Its threads sleep as soon as a parallel
    region ends (``KMP_BLOCKTIME=0`` unless set): spinning would take the core away from the
    BLAS's own threads and from Python."""
    path = Path(sys.prefix) / "lib" / "libiomp5.so"
    if not path.exists():
        return None
    os.environ.setdefault("KMP_BLOCKTIME", "0")
    return str(path)


def _flag(value: bool) -> str:
    return "true" if value else "false"


def cpu_pipeline_text(to: str = "llvm") -> str:
    """The pipeline the backend runs: BLAS calls and OpenMP threads only where their runtime
    libraries were found."""
    return (f"mlax-cpu-pipeline{{to={to} blas={_flag(bool(gemm_symbols()))} "
            f"openmp={_flag(openmp_library() is not None)}}}")


def lower_for_cpu(module: ir.Module, to: str = "llvm", entry: str = "main") -> None:
    """Run the CPU pipeline on ``module`` in place, writing the IR after every pass to
    ``config.dump_dir`` (``MLAX_DUMP_DIR``) when it is set."""
    if config.dump_dir:
        run_dumped(module, cpu_pipeline_text(to), entry)
        return
    for stage in reusable_stages(module.context, cpu_pipeline_text(to)):
        run_stage(stage, module.operation)


class CpuExecutable:
    """One compiled entry function, callable on NumPy inputs; returns fresh NumPy outputs."""

    def __init__(self, module: ir.Module, entry: str) -> None:
        with module.context:
            lowered = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
            function = _entry_function(lowered, entry)
            function_type = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
            self._outputs = [(spec.shape, spec.dtype)
                             for spec in map(TensorSpec.from_mlir, function_type.results)]
            count = len(function_type.inputs) + len(self._outputs)
            self._callbacks = host_callbacks.callbacks_of(lowered)  # held while the code lives
            lower_for_cpu(lowered, entry=entry)
            orc.expose(_runtime_libraries(), {**gemm_symbols(), **host_callbacks.cpu_symbols()})
            self._code = orc.JitCode(lowered, entry_symbol(entry))
        self._function = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * count)(self._code.address)

    def __call__(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        outputs = [np.empty(shape, dtype) for shape, dtype in self._outputs]
        buffers = [a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in inputs]
        self._function(*[array.ctypes.data for array in buffers], *[array.ctypes.data for array in outputs])
        if self._callbacks:
            host_callbacks.raise_pending(self._callbacks)
        return outputs


def _entry_function(module: ir.Module, entry: str) -> ir.Operation:
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == entry:
            return op.operation
    raise ValueError(f"no function @{entry} in the module")

