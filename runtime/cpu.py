"""The CPU backend: `mlax-cpu-pipeline`, then LLVM's ExecutionEngine (O3), called on NumPy buffers.

The compiled entry takes one bare pointer per buffer (inputs, then caller-allocated outputs;
see passes/cpu_pipeline.py). Its packed wrapper (``void **``, one slot per pointer) is looked
up once per compiled signature with the slot array prepared; a call stores the data pointers
of the inputs and of freshly allocated outputs in the slots and jumps in. Inputs are never
copied unless they are not C-contiguous (they have the traced dtypes, see mlax.core.to_numpy). The
engine lives as long as the executable, i.e. as long as its jit cache entry.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import mlir
import numpy as np
from mlir import ir
from mlir.execution_engine import ExecutionEngine

from mlax.configuration import config
from mlax.dialect.tensor_spec import TensorSpec
from mlax.passes.buffer_abi import entry_symbol
from mlax.passes.pipeline import Stage, build_stages, fuse_upstream, parse_pipeline, run_stage
from mlax.runtime.blas import gemm_symbols

OPT_LEVEL = 3
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


_FUSED_STAGES: dict[tuple[ir.Context, str], list[Stage]] = {}


def _fused_stages(context: ir.Context, to: str) -> list[Stage]:
    """The pipeline's PassManagers (consecutive upstream passes in one), built once per
    context and stage: building them costs as much as running them on a small program."""
    key = (context, cpu_pipeline_text(to))
    if key not in _FUSED_STAGES:
        _FUSED_STAGES[key] = build_stages(fuse_upstream(parse_pipeline(key[1])), context)
    return _FUSED_STAGES[key]


def lower_for_cpu(module: ir.Module, to: str = "llvm", entry: str = "main") -> None:
    """Run the CPU pipeline on ``module`` in place, writing the IR after every pass to
    ``config.dump_dir`` (``MLAX_DUMP_DIR``) when it is set."""
    if not config.dump_dir:
        for stage in _fused_stages(module.context, to):
            run_stage(stage, module.operation)
        return
    dump = Path(config.dump_dir)
    dump.mkdir(parents=True, exist_ok=True)
    (dump / f"{entry}.00.input.mlir").write_text(str(module))
    stages = build_stages(parse_pipeline(cpu_pipeline_text(to)), module.context)
    for number, stage in enumerate(stages, start=1):
        run_stage(stage, module.operation)
        name = stage.element.name.replace(".", "_")
        (dump / f"{entry}.{number:02d}.{name}.mlir").write_text(str(module))


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
            lower_for_cpu(lowered, entry=entry)
            self._engine = ExecutionEngine(lowered, opt_level=OPT_LEVEL, shared_libs=_runtime_libraries())
        for symbol, address in gemm_symbols().items():
            self._engine.raw_register_runtime(symbol, ctypes.c_void_p(address))
        address = self._engine.raw_lookup(entry_symbol(entry))
        self._function = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)
        self._slots = (ctypes.c_void_p * max(count, 1))()
        base = ctypes.addressof(self._slots)
        size = ctypes.sizeof(ctypes.c_void_p)
        self._packed = (ctypes.c_void_p * max(count, 1))(*(base + i * size for i in range(count)))
        self._lock = threading.Lock()

    def __call__(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        outputs = [np.empty(shape, dtype) for shape, dtype in self._outputs]
        buffers = [a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in inputs]
        with self._lock:
            slots = self._slots
            for i, array in enumerate((*buffers, *outputs)):
                slots[i] = array.ctypes.data
            self._function(self._packed)
        return outputs


_COMPILED: OrderedDict[tuple[str, str], CpuExecutable] = OrderedDict()
COMPILED_CACHE_SIZE = 256


def compile_cached(module: ir.Module, entry: str) -> CpuExecutable:
    """The executable of ``module``'s ``entry``, shared by every jit whose program prints the
    same (without locations): re-jitting a function, or jitting an equal one, skips LLVM.
    With ``MLAX_DUMP_DIR`` set every compile runs, so its passes are dumped."""
    if config.dump_dir:
        return CpuExecutable(module, entry)
    key = (module.operation.get_asm(enable_debug_info=False), entry)
    executable = _COMPILED.get(key)
    if executable is None:
        executable = _COMPILED[key] = CpuExecutable(module, entry)
        while len(_COMPILED) > COMPILED_CACHE_SIZE:
            _COMPILED.popitem(last=False)
    else:
        _COMPILED.move_to_end(key)
    return executable


def _entry_function(module: ir.Module, entry: str) -> ir.Operation:
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == entry:
            return op.operation
    raise ValueError(f"no function @{entry} in the module")

