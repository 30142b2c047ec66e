"""Native code for LLVM-dialect modules in one process-wide ORC JIT (LLVM's C API, via ctypes).

MLIR's ``ExecutionEngine`` builds a whole JIT per module: an ORC session, a TargetMachine, an
LLVMContext kept for the engine's life, and every runtime library re-read as an object file
into its own JITDylib (symbol tables of libmlir_c_runner_utils and libiomp5 included). That is
~3 MB of RSS per compiled program, even for an 8-element function (docs/performance.md).
Here one LLJIT serves the process: a module is translated to LLVM IR in a context of its own,
optimized at O3 and compiled to an object file (both freed right away), and linked into the
main JITDylib under a ResourceTracker of its own; dropping the returned `JitCode` removes the
tracker, which unmaps its code. Runtime libraries are dlopen'ed once, globally, and found
through the JIT's process-symbol lookup; other addresses are defined once as absolute symbols.

Programs share one symbol namespace, so every definition but the entry becomes internal and
the entry gets a name of its own. Compiling is thread-safe: each compile has its own
LLVMContext and TargetMachine, and ORC locks its session.

Compiling (`object_file`: optimize and emit) and linking (`JitCode`) are two steps, so that an
object file kept on disk (backends/cpu/disk_cache.py) is linked in a later process without running
LLVM. `llvm_compiles` counts the objects LLVM emitted in this process (tests read it to tell a
cache hit from a compile). `unresolved` lists what an object needs that the process does not
export yet, so that runtime libraries are loaded only for the programs that call them.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import platform
import struct
import threading
import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path

import mlir
from mlir import ir

from mlax.passes.abi import RELEASE_FUNCTION

_P = ctypes.c_void_p
_LLVM = ctypes.CDLL(str(Path(mlir.__path__[0]).parent / "llvm" / "lib" / "libLLVM.so"))
_MLIR = ctypes.CDLL(str(Path(mlir.__path__[0]) / "_mlir_libs" / "libMLIRPythonCAPI.so"))
_NATIVE_TARGETS = {"x86_64": "X86", "aarch64": "AArch64"}
_EXTERNAL_LINKAGE, _INTERNAL_LINKAGE = 0, 8  # LLVMLinkage
_CODEGEN_AGGRESSIVE, _RELOC_DEFAULT, _CODE_MODEL_JIT_DEFAULT, _OBJECT_FILE = 3, 0, 1, 1
_EXPORTED, _CALLABLE = 1, 4  # LLVMJITSymbolGenericFlags


def _bind(library: ctypes.CDLL, name: str, restype: type | None, *argtypes: type) -> ctypes._CFuncPtr:
    function = getattr(library, name)
    function.restype, function.argtypes = restype, list(argtypes)
    return function


_translate = _bind(_MLIR, "mlirTranslateModuleToLLVMIR", _P, _P, _P)
_context_create = _bind(_LLVM, "LLVMContextCreate", _P)
_context_dispose = _bind(_LLVM, "LLVMContextDispose", None, _P)
_module_dispose = _bind(_LLVM, "LLVMDisposeModule", None, _P)
_dispose_message = _bind(_LLVM, "LLVMDisposeMessage", None, _P)
_host_cpu = _bind(_LLVM, "LLVMGetHostCPUName", _P)
_host_features = _bind(_LLVM, "LLVMGetHostCPUFeatures", _P)
_target_from_triple = _bind(_LLVM, "LLVMGetTargetFromTriple", ctypes.c_int, ctypes.c_char_p,
                            ctypes.POINTER(_P), ctypes.POINTER(_P))
_create_target_machine = _bind(_LLVM, "LLVMCreateTargetMachine", _P, _P, ctypes.c_char_p, ctypes.c_char_p,
                               ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int)
_dispose_target_machine = _bind(_LLVM, "LLVMDisposeTargetMachine", None, _P)
_create_data_layout = _bind(_LLVM, "LLVMCreateTargetDataLayout", _P, _P)
_dispose_data_layout = _bind(_LLVM, "LLVMDisposeTargetData", None, _P)
_set_data_layout = _bind(_LLVM, "LLVMSetModuleDataLayout", None, _P, _P)
_set_triple = _bind(_LLVM, "LLVMSetTarget", None, _P, ctypes.c_char_p)
_first_function = _bind(_LLVM, "LLVMGetFirstFunction", _P, _P)
_next_function = _bind(_LLVM, "LLVMGetNextFunction", _P, _P)
_first_global = _bind(_LLVM, "LLVMGetFirstGlobal", _P, _P)
_next_global = _bind(_LLVM, "LLVMGetNextGlobal", _P, _P)
_named_function = _bind(_LLVM, "LLVMGetNamedFunction", _P, _P, ctypes.c_char_p)
_named_global = _bind(_LLVM, "LLVMGetNamedGlobal", _P, _P, ctypes.c_char_p)
_is_declaration = _bind(_LLVM, "LLVMIsDeclaration", ctypes.c_int, _P)
_set_value_name = _bind(_LLVM, "LLVMSetValueName2", None, _P, ctypes.c_char_p, ctypes.c_size_t)
_linkage = _bind(_LLVM, "LLVMGetLinkage", ctypes.c_int, _P)
_set_linkage = _bind(_LLVM, "LLVMSetLinkage", None, _P, ctypes.c_int)
_pass_options = _bind(_LLVM, "LLVMCreatePassBuilderOptions", _P)
_dispose_pass_options = _bind(_LLVM, "LLVMDisposePassBuilderOptions", None, _P)
_run_passes = _bind(_LLVM, "LLVMRunPasses", _P, _P, ctypes.c_char_p, _P, _P)
_emit_to_buffer = _bind(_LLVM, "LLVMTargetMachineEmitToMemoryBuffer", ctypes.c_int, _P, _P, ctypes.c_int,
                        ctypes.POINTER(_P), ctypes.POINTER(_P))
_buffer_start = _bind(_LLVM, "LLVMGetBufferStart", _P, _P)
_buffer_size = _bind(_LLVM, "LLVMGetBufferSize", ctypes.c_size_t, _P)
_dispose_buffer = _bind(_LLVM, "LLVMDisposeMemoryBuffer", None, _P)
_buffer_copy = _bind(_LLVM, "LLVMCreateMemoryBufferWithMemoryRangeCopy", _P, ctypes.c_char_p, ctypes.c_size_t,
                     ctypes.c_char_p)
_UINT_P = ctypes.POINTER(ctypes.c_uint)
_llvm_version = _bind(_LLVM, "LLVMGetVersion", None, _UINT_P, _UINT_P, _UINT_P)
_error_message = _bind(_LLVM, "LLVMGetErrorMessage", _P, _P)
_dispose_error_message = _bind(_LLVM, "LLVMDisposeErrorMessage", None, _P)
_create_lljit = _bind(_LLVM, "LLVMOrcCreateLLJIT", _P, ctypes.POINTER(_P), _P)
_jit_triple = _bind(_LLVM, "LLVMOrcLLJITGetTripleString", ctypes.c_char_p, _P)
_main_dylib = _bind(_LLVM, "LLVMOrcLLJITGetMainJITDylib", _P, _P)
_mangle_and_intern = _bind(_LLVM, "LLVMOrcLLJITMangleAndIntern", _P, _P, ctypes.c_char_p)
_string_pool = _bind(_LLVM, "LLVMOrcExecutionSessionGetSymbolStringPool", _P, _P)
_execution_session = _bind(_LLVM, "LLVMOrcLLJITGetExecutionSession", _P, _P)
_clear_dead_strings = _bind(_LLVM, "LLVMOrcSymbolStringPoolClearDeadEntries", None, _P)
_create_tracker = _bind(_LLVM, "LLVMOrcJITDylibCreateResourceTracker", _P, _P)
_remove_tracker = _bind(_LLVM, "LLVMOrcResourceTrackerRemove", _P, _P)
_release_tracker = _bind(_LLVM, "LLVMOrcReleaseResourceTracker", None, _P)
_add_object = _bind(_LLVM, "LLVMOrcLLJITAddObjectFileWithRT", _P, _P, _P, _P)
_lookup = _bind(_LLVM, "LLVMOrcLLJITLookup", _P, _P, ctypes.POINTER(ctypes.c_uint64), ctypes.c_char_p)
_define = _bind(_LLVM, "LLVMOrcJITDylibDefine", _P, _P, _P)


class _SymbolFlags(ctypes.Structure):
    _fields_ = [("generic", ctypes.c_uint8), ("target", ctypes.c_uint8)]


class _Symbol(ctypes.Structure):
    _fields_ = [("address", ctypes.c_uint64), ("flags", _SymbolFlags)]


class _SymbolPair(ctypes.Structure):
    _fields_ = [("name", _P), ("symbol", _Symbol)]


_absolute_symbols = _bind(_LLVM, "LLVMOrcAbsoluteSymbols", _P, ctypes.POINTER(_SymbolPair), ctypes.c_size_t)
_capsule_pointer = _bind(ctypes.pythonapi, "PyCapsule_GetPointer", _P, ctypes.py_object, ctypes.c_char_p)
_PASS_OPTIONS = ("LoopVectorization", "SLPVectorization", "LoopUnrolling", "LoopInterleaving")
_OPTIMIZATION = b"default<O3>"
# What `object_file` does beyond the module and the host: part of the disk cache's key.
CODEGEN = (f"{_OPTIMIZATION.decode()} {' '.join(_PASS_OPTIONS)} codegen={_CODEGEN_AGGRESSIVE} "
           f"reloc={_RELOC_DEFAULT} code-model={_CODE_MODEL_JIT_DEFAULT}")
_enable_pass_option = {name: _bind(_LLVM, f"LLVMPassBuilderOptionsSet{name}", None, _P, ctypes.c_int)
                       for name in _PASS_OPTIONS}


def _check(error: int | None) -> None:
    if error:
        message = _error_message(error)
        text = ctypes.string_at(message).decode(errors="replace")
        _dispose_error_message(message)
        raise RuntimeError(text)


def _owned_string(pointer: int) -> bytes:
    text = ctypes.string_at(pointer)
    _dispose_message(pointer)
    return text


class _Jit:
    """The process's LLJIT and what every compile needs from the host (target, CPU, features)."""

    def __init__(self) -> None:
        native = _NATIVE_TARGETS.get(platform.machine())
        if native is None:
            raise RuntimeError(f"the CPU backend does not know the LLVM target of {platform.machine()!r}")
        for part in ("TargetInfo", "Target", "TargetMC", "AsmPrinter"):
            getattr(_LLVM, f"LLVMInitialize{native}{part}")()
        jit = _P()
        _check(_create_lljit(ctypes.byref(jit), None))
        self.handle = jit.value
        self.main = _main_dylib(self.handle)
        self.strings = _string_pool(_execution_session(self.handle))
        self.triple = _jit_triple(self.handle)
        self.cpu = _owned_string(_host_cpu())
        self.features = _owned_string(_host_features())
        target, message = _P(), _P()
        if _target_from_triple(self.triple, ctypes.byref(target), ctypes.byref(message)):
            raise RuntimeError(_owned_string(message.value).decode())
        self.target = target.value
        self.lock = threading.Lock()
        self.libraries: dict[str, ctypes.CDLL] = {}
        self.symbols: set[str] = set()

    def target_machine(self) -> int:
        """A TargetMachine like the JIT's own (host CPU and features, O3, JIT code model)."""
        return _create_target_machine(self.target, self.triple, self.cpu, self.features,
                                      _CODEGEN_AGGRESSIVE, _RELOC_DEFAULT, _CODE_MODEL_JIT_DEFAULT)


_JIT: _Jit | None = None
_JIT_LOCK = threading.Lock()
_names = itertools.count()
llvm_compiles = 0  # objects emitted by LLVM in this process


def unique_name(entry: str) -> str:
    """A symbol name no other program of this process has."""
    return f"{entry}.{next(_names)}"


def host() -> tuple[str, str, str]:
    """The target triple, CPU name and CPU features code is compiled for."""
    jit = _jit()
    return jit.triple.decode(), jit.cpu.decode(), jit.features.decode()


@functools.cache
def llvm_version() -> str:
    """The LLVM the process compiles with: its version and the identity (size, mtime) of the
    libraries that translate and compile (a rebuilt wheel of the same version differs)."""
    major, minor, patch = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()
    _llvm_version(ctypes.byref(major), ctypes.byref(minor), ctypes.byref(patch))
    files = [f"{s.st_size}:{s.st_mtime_ns}" for s in (Path(_LLVM._name).stat(), Path(_MLIR._name).stat())]
    return f"{major.value}.{minor.value}.{patch.value} {' '.join(files)}"


def _jit() -> _Jit:
    global _JIT
    with _JIT_LOCK:
        if _JIT is None:
            _JIT = _Jit()
        return _JIT


def expose(libraries: Iterable[str], symbols: Mapping[str, int]) -> None:
    """Make the exports of ``libraries`` (dlopen'ed once, globally) and the absolute addresses
    ``symbols`` visible to the code compiled from now on; each is loaded or defined once."""
    jit = _jit()
    with jit.lock:
        for path in libraries:
            if path not in jit.libraries:
                jit.libraries[path] = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        new = {name: address for name, address in symbols.items() if name not in jit.symbols}
        if not new:
            return
        pairs = (_SymbolPair * len(new))(*(
            _SymbolPair(_mangle_and_intern(jit.handle, name.encode()),
                        _Symbol(address, _SymbolFlags(_EXPORTED | _CALLABLE, 0)))
            for name, address in new.items()))
        _check(_define(jit.main, _absolute_symbols(pairs, len(new))))
        jit.symbols.update(new)


_PROCESS = ctypes.CDLL(None)


def unresolved(obj: bytes) -> list[str] | None:
    """The symbols ``obj`` needs that neither the JIT defines nor the process exports (the
    libraries loaded globally so far); None if ``obj`` is not an ELF object this can read."""
    jit = _jit()
    needed = undefined_symbols(obj)
    if needed is None:
        return None
    with jit.lock:
        return [name for name in needed if name not in jit.symbols and not _exported(name)]


def _exported(name: str) -> bool:
    try:
        _PROCESS[name]  # dlsym in the process's global scope, where the JIT looks too
        return True
    except AttributeError:
        return False


def undefined_symbols(obj: bytes) -> list[str] | None:
    """The names of the undefined symbols of a relocatable ELF64 little-endian object (what LLVM
    emits on Linux), or None for anything else."""
    if obj[:6] != b"\x7fELF\x02\x01" or len(obj) < 64:
        return None
    try:
        return _elf_undefined(obj)
    except (struct.error, IndexError, ValueError, OverflowError):  # malformed: let the linker say why
        return None


def _elf_undefined(obj: bytes) -> list[str]:
    section_offset, = struct.unpack_from("<Q", obj, 0x28)
    entry_size, count = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, section_offset + i * entry_size) for i in range(count)]
    names = []
    for _, kind, _, _, offset, size, link, _, _, symbol_size in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        strings = sections[link][4]
        for at in range(offset + symbol_size, offset + size, symbol_size):  # entry 0 is the null symbol
            name, info, _, index = struct.unpack_from("<IBBH", obj, at)
            if index == 0 and name and info >> 4 in (1, 2):  # SHN_UNDEF, STB_GLOBAL / STB_WEAK
                names.append(obj[strings + name:obj.index(b"\0", strings + name)].decode())
    return names


def _defined(first: int | None, following: ctypes._CFuncPtr) -> Iterable[int]:
    value = first
    while value:
        if not _is_declaration(value):
            yield value
        value = following(value)


def object_file(module: ir.Module, entry: str, name: str) -> bytes:
    """``module`` (LLVM dialect) compiled to an object file for the host whose only external
    definition is ``entry``, renamed ``name``."""
    global llvm_compiles
    buffer = _object_file(module, entry, name.encode(), _jit())
    try:
        data = ctypes.string_at(_buffer_start(buffer), _buffer_size(buffer))
    finally:
        _dispose_buffer(buffer)
    llvm_compiles += 1
    return data


def _object_file(module: ir.Module, entry: str, name: bytes, jit: _Jit) -> int:
    """``module`` compiled to an object file (an LLVMMemoryBufferRef) whose only external
    definition is ``entry``, renamed ``name``."""
    operation = _capsule_pointer(module.operation._CAPIPtr, b"mlir.ir.Operation._CAPIPtr")
    context = _context_create()
    machine = jit.target_machine()
    try:
        llvm_module = _translate(operation, context)
        if not llvm_module:
            raise RuntimeError("could not translate the module to LLVM IR")
        if _named_global(llvm_module, b"llvm.global_ctors"):
            raise NotImplementedError("the CPU runtime does not run global constructors")
        function = _named_function(llvm_module, entry.encode())
        if not function:
            raise ValueError(f"no function @{entry} in the module")
        release = _named_function(llvm_module, RELEASE_FUNCTION.encode())
        for value in (*_defined(_first_function(llvm_module), _next_function),
                      *_defined(_first_global(llvm_module), _next_global)):
            if value not in (function, release) and _linkage(value) == _EXTERNAL_LINKAGE:
                _set_linkage(value, _INTERNAL_LINKAGE)
        _set_value_name(function, name, len(name))
        if release:
            _set_value_name(release, _release_name(name), len(_release_name(name)))
        _set_triple(llvm_module, jit.triple)
        layout = _create_data_layout(machine)
        _set_data_layout(llvm_module, layout)
        _dispose_data_layout(layout)
        options = _pass_options()
        for enable in _enable_pass_option.values():
            enable(options, 1)
        try:
            _check(_run_passes(llvm_module, _OPTIMIZATION, machine, options))
        finally:
            _dispose_pass_options(options)
        buffer, message = _P(), _P()
        if _emit_to_buffer(machine, llvm_module, _OBJECT_FILE, ctypes.byref(message), ctypes.byref(buffer)):
            raise RuntimeError(_owned_string(message.value).decode())
        return buffer.value
    finally:
        _dispose_target_machine(machine)
        _context_dispose(context)  # frees the LLVM module with it


def _release_name(name: bytes) -> bytes:
    """The exported name of a program's `RELEASE_FUNCTION` (the entry ``name`` is unique)."""
    return name + b".release"


def _remove(tracker: int, strings: int, release: int | None) -> None:
    try:
        if release is not None:
            ctypes.CFUNCTYPE(None)(release)()  # the program's cached library state
        _check(_remove_tracker(tracker))
    finally:
        _release_tracker(tracker)
        _clear_dead_strings(strings)  # the program's entry name


def _address_of(jit: _Jit, name: bytes) -> int:
    address = ctypes.c_uint64()
    _check(_lookup(jit.handle, ctypes.byref(address), name))
    return address.value


class JitCode:
    """The machine code of an object file made by `object_file` (in this process or another on
    the same host and LLVM), linked into the process-wide JIT and unlinked (its memory unmapped)
    when this object is garbage collected. ``name`` is its entry: no other linked program may
    define it."""

    def __init__(self, obj: bytes, name: str) -> None:
        jit = _jit()
        tracker = _create_tracker(jit.main)
        buffer = _buffer_copy(obj, len(obj), name.encode())
        try:
            _check(_add_object(jit.handle, tracker, buffer))  # owns the buffer from here on
            self.address: int = _address_of(jit, name.encode())
            # The name is unique to this program, so its bytes in the object mean the definition.
            release = _address_of(jit, _release_name(name.encode())) if _release_name(name.encode()) in obj \
                else None
        except BaseException:
            _remove(tracker, jit.strings, None)
            raise
        weakref.finalize(self, _remove, tracker, jit.strings, release).atexit = False
