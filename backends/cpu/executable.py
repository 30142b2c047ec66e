"""The CPU backend: `mlax-cpu-pipeline`, then LLVM at O3 in the process-wide JIT (backends/cpu/orc.py),
called on NumPy buffers.

The compiled entry takes one bare pointer per buffer (inputs, then caller-allocated outputs;
see backends/cpu/pipeline.py), so a call is one ctypes call with the data pointers of the inputs
and of freshly allocated outputs: no state is shared between calls, and ctypes releases the GIL,
so threads calling one executable run in parallel. Inputs are never copied unless they are not
C-contiguous (they have the traced dtypes, see mlax.core.to_numpy). The machine code lives as
long as the executable, which the process-wide compile cache owns (backends/registry.py).

With ``compilation_cache_dir`` set, the object file LLVM emits is kept on disk
(backends/cpu/disk_cache.py) and a later process with the same program links it: no pass pipeline,
no LLVM (the output shapes come from the mlax program itself). Such code is named after its
key, and executables of one program in a process share it (`_LINKED`).
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import io
import os
import sys
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path

import mlir
import numpy as np
from mlir import ir

from mlax.backends.cpu import CPU, disk_cache, kernel_events, orc
from mlax.backends.cpu.pipeline import CpuPipeline
from mlax.backends.dumping import lower
from mlax.backends.memory_limits import check_numpy_rank, check_program_fits
from mlax.backends.native import host_callbacks
from mlax.backends.native.blas import gemm_symbols
from mlax.backends.native.fft import calls_fft, fft_symbols
from mlax.backends.native.lapack import calls_lapack, lapack_symbols
from mlax.configuration import config
from mlax.dialect import get_context
from mlax.dialect.tensor_spec import TensorSpec
from mlax.passes import user_primitives
from mlax.passes.abi import PROFILE_KERNELS_ATTRIBUTE, entry_symbol

_RUNTIME_LIBRARIES = ("libmlir_c_runner_utils.so",)


def _runtime_libraries() -> list[str]:
    """The libraries compiled code may call, cheapest to load first."""
    lib = Path(mlir.__path__[0]) / "lib"
    found = [str(lib / name) for name in _RUNTIME_LIBRARIES if (lib / name).exists()]
    openmp = openmp_library()
    return ([openmp] if openmp else []) + found


def _link(obj: bytes, name: str) -> orc.JitCode:
    """Link ``obj`` (entry ``name``), loading runtime libraries first while it needs a symbol the
    process does not export yet: most programs need none of them, and libmlir_c_runner_utils
    (memrefCopy, the sparse runtime, the f16/bf16 conversions of its libgcc) loads libMLIR.so,
    ~60 ms, more than a cache hit's whole cost."""
    for library in _runtime_libraries():
        if orc.unresolved(obj) == []:
            break
        orc.expose([library], {})
    return orc.JitCode(obj, name)


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


def cpu_options() -> CpuPipeline:
    """The pipeline the backend runs: BLAS calls and OpenMP threads only where their runtime
    libraries were found."""
    return CpuPipeline(blas=bool(gemm_symbols()), openmp=openmp_library() is not None)


@functools.cache
def _expanded_pipeline() -> str:
    """The passes `cpu_options` stands for (part of the disk cache's key)."""
    return cpu_options().elements_text()


class CpuExecutable:
    """One compiled entry function, callable on NumPy inputs; returns fresh NumPy outputs."""

    def __init__(self, module: ir.Module, entry: str) -> None:
        with module.context:
            check_program_fits(module.operation, skip_unused=True)  # buffers are malloc'ed unchecked
            function = _entry_function(module, entry)
            _check_entry_ranks(function)
            function_type = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
            self._outputs = [(spec.shape, spec.dtype)
                             for spec in map(TensorSpec.from_mlir, function_type.results)]
            count = len(function_type.inputs) + len(self._outputs)
            self._callbacks = host_callbacks.callbacks_of(module)  # held while the code lives
            orc.expose((), {**gemm_symbols(), **(lapack_symbols() if calls_lapack(module) else {}),
                              **(fft_symbols() if calls_fft(module) else {}),
                              **host_callbacks.cpu_symbols()})
            # Host callbacks and user primitives are named by this process's ids (their Python
            # rules are not in the text), and a dump wants the passes run.
            own_ids = self._callbacks or user_primitives.declarations(module.operation)
            cache = None if own_ids or config.dump_dir else disk_cache.active()
            with host_callbacks.registered_meanwhile() as added:  # by rules traced at pass time
                self._code = _compile(module, entry) if cache is None else _cached(module, entry, *cache)
            self._callbacks += added
        self._signature = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * count)
        self._function = self._signature(self._code.address)
        # The program for its profiled variant, made when first asked for: as bytecode, since the
        # module would keep this thread's MLIR context alive as long as the executable lives.
        bytecode = io.BytesIO()
        module.operation.write_bytecode(bytecode)
        self._program, self._entry = bytecode.getvalue(), entry
        self._profiled: tuple[orc.JitCode, ctypes._CFuncPtr, list[kernel_events.Kernel]] | None = None

    def __call__(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        outputs = [np.empty(shape, dtype) for shape, dtype in self._outputs]
        buffers = [a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in inputs]
        pointers = [*[array.ctypes.data for array in buffers], *[array.ctypes.data for array in outputs]]
        if kernel_events.recording.on:
            _, function, kernels = self._profiled_code()
            kernel_events.profiled_call(self._entry, kernels, lambda: function(*pointers))
        else:
            self._function(*pointers)
        if self._callbacks:
            host_callbacks.raise_pending(self._callbacks)
        return outputs

    def _profiled_code(self) -> tuple[orc.JitCode, ctypes._CFuncPtr, list[kernel_events.Kernel]]:
        """The program compiled with each kernel timed (`mlax-profile-kernels`), and its kernels."""
        if self._profiled is None:
            with get_context():
                lowered = _lowered(ir.Module.parse(self._program), self._entry, profile=True)
                described = lowered.operation.attributes[PROFILE_KERNELS_ATTRIBUTE]
                kernels = [kernel_events.Kernel(
                    ir.StringAttr(d["kind"]).value, ir.StringAttr(d["type"]).value,
                    ir.IntegerAttr(d["bytes"]).value, ir.StringAttr(d["source"]).value)
                    for d in map(ir.DictAttr, ir.ArrayAttr(described))]
                del lowered.operation.attributes[PROFILE_KERNELS_ATTRIBUTE]
                name = orc.unique_name(self._entry)
                code = _link(orc.object_file(lowered, entry_symbol(self._entry), name), name)
            self._profiled = (code, self._signature(code.address), kernels)
        return self._profiled


def _check_entry_ranks(function: ir.Operation) -> None:
    """The entry takes and returns NumPy arrays: NumpyRankError for one of too many dimensions."""
    function_type = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
    name = ir.StringAttr(function.attributes["sym_name"]).value
    for side, types in (("argument", function_type.inputs), ("result", function_type.results)):
        for i, t in enumerate(types):
            check_numpy_rank(t, f"{side} {i} of @{name}", function.location, "the cpu backend")


def _lowered(module: ir.Module, entry: str, profile: bool = False) -> ir.Module:
    """A copy of ``module`` lowered to the LLVM dialect (with its kernels timed if ``profile``)."""
    lowered = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
    if profile:
        with lowered.context:
            lower(lowered, dataclasses.replace(CPU.options, profile=True).textual(), entry)
    else:
        CPU.lower(lowered, entry)
    return lowered


def _compile(module: ir.Module, entry: str) -> orc.JitCode:
    name = orc.unique_name(entry)
    return _link(orc.object_file(_lowered(module, entry), entry_symbol(entry), name), name)


_LINKED: weakref.WeakValueDictionary[str, orc.JitCode] = weakref.WeakValueDictionary()
_LINK_LOCK = threading.Lock()


def _cached(module: ir.Module, entry: str, cache: disk_cache.DiskCache, max_size: int) -> orc.JitCode:
    """The code of ``module``'s ``entry`` through the disk cache: linked from its entry, or
    compiled and stored; shared with any live executable of the same program."""
    key = disk_cache.cache_key(module.operation.get_asm(enable_debug_info=False), entry, _expanded_pipeline())
    name = disk_cache.symbol_name(key)
    with _LINK_LOCK:
        code = _LINKED.get(name)
    if code is not None:
        return code
    obj = cache.get(key)
    if obj is not None:
        try:
            return _link_shared(obj, name)
        except RuntimeError:  # an object this LLVM cannot link: compile it again
            disk_cache.stats.rejected += 1
    obj = orc.object_file(_lowered(module, entry), entry_symbol(entry), name)
    cache.put(key, obj, max_size)
    return _link_shared(obj, name)


def _link_shared(obj: bytes, name: str) -> orc.JitCode:
    with _LINK_LOCK:
        code = _LINKED.get(name)
        if code is None:  # a thread compiling the same program may have linked it meanwhile
            code = _LINKED[name] = _link(obj, name)
    return code


def _entry_function(module: ir.Module | ir.Operation, entry: str) -> ir.Operation:
    for op in module.operation.regions[0].blocks[0].operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == entry:
            return op.operation
    raise ValueError(f"no function @{entry} in the module")

