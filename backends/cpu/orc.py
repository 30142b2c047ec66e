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
LLVM. A big module's functions are shared among threads, one LLVMContext and object file each
(the module translated once per part, the other parts' functions declared), and the objects,
kept together as one bundle, are linked under one tracker. `llvm_compiles` counts the programs
LLVM compiled in this process (tests read it to tell a cache hit from a compile). `unresolved`
lists what an object needs that the process does not export yet, so that runtime libraries are
loaded only for the programs that call them.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import functools
import itertools
import os
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
_value_name = _bind(_LLVM, "LLVMGetValueName2", _P, _P, ctypes.POINTER(ctypes.c_size_t))
_first_use = _bind(_LLVM, "LLVMGetFirstUse", _P, _P)
_next_use = _bind(_LLVM, "LLVMGetNextUse", _P, _P)
_user = _bind(_LLVM, "LLVMGetUser", _P, _P)
_called_value = _bind(_LLVM, "LLVMGetCalledValue", _P, _P)
_as_call = _bind(_LLVM, "LLVMIsACallInst", _P, _P)
_as_instruction = _bind(_LLVM, "LLVMIsAInstruction", _P, _P)
_instruction_block = _bind(_LLVM, "LLVMGetInstructionParent", _P, _P)
_block_function = _bind(_LLVM, "LLVMGetBasicBlockParent", _P, _P)
_attribute_kind = _bind(_LLVM, "LLVMGetEnumAttributeKindForName", ctypes.c_uint, ctypes.c_char_p,
                        ctypes.c_size_t)
_function_attribute = _bind(_LLVM, "LLVMGetEnumAttributeAtIndex", _P, _P, ctypes.c_uint, ctypes.c_uint)
_FUNCTION_INDEX = 0xFFFFFFFF  # LLVMAttributeFunctionIndex
_count_blocks = _bind(_LLVM, "LLVMCountBasicBlocks", ctypes.c_uint, _P)
_value_type = _bind(_LLVM, "LLVMGlobalGetValueType", _P, _P)
_add_function = _bind(_LLVM, "LLVMAddFunction", _P, _P, ctypes.c_char_p, _P)
_call_conv = _bind(_LLVM, "LLVMGetFunctionCallConv", ctypes.c_uint, _P)
_set_call_conv = _bind(_LLVM, "LLVMSetFunctionCallConv", None, _P, ctypes.c_uint)
_replace_uses = _bind(_LLVM, "LLVMReplaceAllUsesWith", None, _P, _P)
_delete_function = _bind(_LLVM, "LLVMDeleteFunction", None, _P)
_delete_global = _bind(_LLVM, "LLVMDeleteGlobal", None, _P)
_is_constant = _bind(_LLVM, "LLVMIsGlobalConstant", ctypes.c_int, _P)
_set_initializer = _bind(_LLVM, "LLVMSetInitializer", None, _P, _P)
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
    emits on Linux), or of a bundle's objects less what they define for each other; None for
    anything else."""
    undefined: list[str] = []
    defined: set[str] = set()
    for one in split_objects(obj):
        if one[:6] != b"\x7fELF\x02\x01" or len(one) < 64:
            return None
        try:
            needs, has = _elf_symbols(one)
        except (struct.error, IndexError, ValueError, OverflowError):  # malformed: let the linker say why
            return None
        undefined += needs
        defined |= has
    return [name for name in dict.fromkeys(undefined) if name not in defined]


def _elf_symbols(obj: bytes) -> tuple[list[str], set[str]]:
    """The global symbols ``obj`` needs and those it defines."""
    section_offset, = struct.unpack_from("<Q", obj, 0x28)
    entry_size, count = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, section_offset + i * entry_size) for i in range(count)]
    needs, has = [], set()
    for _, kind, _, _, offset, size, link, _, _, symbol_size in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        strings = sections[link][4]
        for at in range(offset + symbol_size, offset + size, symbol_size):  # entry 0 is the null symbol
            name, info, _, index = struct.unpack_from("<IBBH", obj, at)
            if name and info >> 4 in (1, 2):  # STB_GLOBAL / STB_WEAK
                text = obj[strings + name:obj.index(b"\0", strings + name)].decode()
                (needs.append if index == 0 else has.add)(text)  # SHN_UNDEF: needed
    return needs, has


def _defined(first: int | None, following: ctypes._CFuncPtr) -> Iterable[int]:
    value = first
    while value:
        if not _is_declaration(value):
            yield value
        value = following(value)


CODEGEN_THREADS = min(4, len(os.sched_getaffinity(0)))  # LLVM compiles of one program at once


def object_file(module: ir.Module, entry: str, name: str, threads: int = CODEGEN_THREADS) -> bytes:
    """``module`` (LLVM dialect) compiled for the host, its only external definition ``entry``
    renamed ``name``: one object file, or, given several ``threads`` and a module big enough
    to share (`_SHARED_BLOCKS`), a bundle of one object per thread (`split_objects` reads it),
    compiled at once: LLVM's optimization and code generation are most of a first call, and
    its C calls run without the GIL."""
    global llvm_compiles
    jit = _jit()
    operation = _capsule_pointer(module.operation._CAPIPtr, b"mlir.ir.Operation._CAPIPtr")
    parts = [_Part(operation, entry.encode(), name.encode(), jit)]
    try:
        plan = _share(parts[0], threads)
        parts += [_Part(operation, entry.encode(), name.encode(), jit) for _ in plan[1:]]
        for index, part in enumerate(parts):
            part.localize(plan, index)
        if len(parts) == 1:
            objects = [parts[0].emit()]
        else:
            with concurrent.futures.ThreadPoolExecutor(len(parts)) as pool:
                objects = list(pool.map(_Part.emit, parts))
    finally:
        for part in parts:
            part.dispose()
    llvm_compiles += 1
    return objects[0] if len(objects) == 1 else _bundle(objects)


_SHARED_BLOCKS = 400  # basic blocks from which a module's code generation is shared among threads
_BUNDLE = b"\0mlax objects\0"  # an object file starts with ELF's magic, never with this


def _bundle(objects: list[bytes]) -> bytes:
    sizes = struct.pack(f"<I{len(objects)}Q", len(objects), *map(len, objects))
    return b"".join([_BUNDLE, sizes, *objects])


def split_objects(code: bytes) -> list[bytes]:
    """The object files of `object_file`'s result: itself, or the objects of a bundle."""
    if not code.startswith(_BUNDLE):
        return [code]
    count, = struct.unpack_from("<I", code, len(_BUNDLE))
    sizes = struct.unpack_from(f"<{count}Q", code, len(_BUNDLE) + 4)
    at = len(_BUNDLE) + 4 + 8 * count
    objects = []
    for size in sizes:
        objects.append(code[at:at + size])
        at += size
    return objects


class _Part:
    """One translation of the module to LLVM IR, in an LLVMContext of its own, to compile the
    functions `_share` gives it (all of them when the module is not shared)."""

    def __init__(self, operation: int, entry: bytes, name: bytes, jit: _Jit) -> None:
        self.jit, self.entry, self.name = jit, entry, name
        self.context = _context_create()
        self.module = _translate(operation, self.context)
        if not self.module:
            _context_dispose(self.context)
            raise RuntimeError("could not translate the module to LLVM IR")
        if _named_global(self.module, b"llvm.global_ctors"):
            self.dispose()
            raise NotImplementedError("the CPU runtime does not run global constructors")
        if not _named_function(self.module, entry):
            self.dispose()
            raise ValueError(f"no function @{entry.decode()} in the module")

    def functions(self) -> list[int]:
        return list(_defined(_first_function(self.module), _next_function))

    def localize(self, plan: _Plan, index: int) -> None:
        """Make the entry and the release function the only exports (renamed as the program's),
        the rest internal. When the module is shared (``plan``), the functions of other parts
        become declarations (the entry and the release function are part 0's), and the
        functions called from other parts and the mutable globals (part 0 defines them) are
        exported under names of this program, so that the parts link together."""
        entry, release = (_named_function(self.module, n) for n in (self.entry, RELEASE_FUNCTION.encode()))
        shared = len(plan) > 1
        if shared and index:
            for function in filter(None, (entry, release)):
                self._declare(function, _name(function))
            entry = release = None
        for function in self.functions():
            own = _name(function)
            if function in (entry, release):
                continue
            if shared and own not in plan[index]:
                self._declare(function, own)
            elif shared and own in plan.exported:
                _set_value_name(function, *_sized(self._shared_name(own)))
                _set_linkage(function, _EXTERNAL_LINKAGE)
            elif _linkage(function) == _EXTERNAL_LINKAGE:
                _set_linkage(function, _INTERNAL_LINKAGE)
        for variable in list(_defined(_first_global(self.module), _next_global)):
            own = _name(variable)
            if shared and not own.startswith(b"llvm.") and not _is_constant(variable):
                if index and not _first_use(variable):
                    _delete_global(variable)
                    continue
                if index:
                    _set_initializer(variable, None)  # a declaration of part 0's definition
                _set_value_name(variable, *_sized(self._shared_name(own)))
                _set_linkage(variable, _EXTERNAL_LINKAGE)
            elif _linkage(variable) == _EXTERNAL_LINKAGE:
                _set_linkage(variable, _INTERNAL_LINKAGE)
        if entry:
            _set_value_name(entry, *_sized(self.name))
        if release:
            _set_value_name(release, *_sized(_release_name(self.name)))

    def _shared_name(self, own: bytes) -> bytes:
        return self.name + b"." + own

    def _declare(self, function: int, own: bytes) -> None:
        """``function`` replaced by a declaration of its exported name, or dropped if unused."""
        if not _first_use(function):
            _delete_function(function)
            return
        declaration = _add_function(self.module, b"", _value_type(function))
        _set_call_conv(declaration, _call_conv(function))
        _replace_uses(function, declaration)
        _delete_function(function)
        _set_value_name(declaration, *_sized(self._shared_name(own)))

    def emit(self) -> bytes:
        """Optimize (O3) and compile to an object file."""
        machine = self.jit.target_machine()
        try:
            _set_triple(self.module, self.jit.triple)
            layout = _create_data_layout(machine)
            _set_data_layout(self.module, layout)
            _dispose_data_layout(layout)
            options = _pass_options()
            for enable in _enable_pass_option.values():
                enable(options, 1)
            try:
                _check(_run_passes(self.module, _OPTIMIZATION, machine, options))
            finally:
                _dispose_pass_options(options)
            buffer, message = _P(), _P()
            if _emit_to_buffer(machine, self.module, _OBJECT_FILE, ctypes.byref(message),
                               ctypes.byref(buffer)):
                raise RuntimeError(_owned_string(message.value).decode())
        finally:
            _dispose_target_machine(machine)
        try:
            return ctypes.string_at(_buffer_start(buffer), _buffer_size(buffer))
        finally:
            _dispose_buffer(buffer)

    def dispose(self) -> None:
        _context_dispose(self.context)  # frees the LLVM module with it


class _Plan(list):
    """The functions (names) each part compiles, and those called from another part."""

    exported: set[bytes]


def _share(part: _Part, threads: int) -> _Plan:
    """What each of up to ``threads`` parts compiles: units (the entry, the release function,
    each noinline function: the kernels `mlax-outline-kernels` made, and each OpenMP parallel
    body, with the functions only it calls) balanced by basic blocks, the entry's in part 0. A
    call crosses parts only into a function the optimizer would not inline anyway; one part
    (everything) for a small module."""
    functions = {_name(f): f for f in part.functions()}
    sizes = {own: _count_blocks(f) for own, f in functions.items()}
    plan = _Plan([set(sizes)])
    plan.exported = set()
    if threads < 2 or len(sizes) < 2 or sum(sizes.values()) < _SHARED_BLOCKS:
        return plan
    noinline = _attribute_kind(b"noinline", 8)
    pinned = (part.entry, RELEASE_FUNCTION.encode())
    roots = {own for own, f in functions.items()
             if own in pinned or _function_attribute(f, _FUNCTION_INDEX, noinline) or _forked(f)}
    callers = {own: _callers(f) for own, f in functions.items()}

    def root(own: bytes, seen: frozenset[bytes] = frozenset()) -> bytes:
        found = {c for c in callers[own] if c in functions} if own not in roots else set()
        if len(found) != 1 or own in seen or None in callers[own]:  # a root, or used from several
            return own
        return root(found.pop(), seen | {own})

    units: dict[bytes, set[bytes]] = {}
    for own in functions:
        units.setdefault(root(own), set()).add(own)
    loads = [0] * threads
    parts: list[set[bytes]] = [set() for _ in range(threads)]
    for unit in sorted(units, key=lambda u: (u != part.entry, -sum(sizes[n] for n in units[u]))):
        index = 0 if unit in pinned else loads.index(min(loads))
        parts[index] |= units[unit]
        loads[index] += sum(sizes[n] for n in units[unit])
    parts = [names for names in parts if names]
    if len(parts) < 2:
        return plan
    where = {own: i for i, names in enumerate(parts) for own in names}
    plan = _Plan(parts)
    plan.exported = {own for own in functions
                     if any(c is None or where.get(c) != where[own] for c in callers[own])}
    return plan


def _forked(function: int) -> bool:
    """Whether ``function`` is the body of an OpenMP parallel region: handed to the runtime's
    ``__kmpc_fork_call`` (which runs it on every thread), never called directly."""
    use = _first_use(function)
    while use:
        user = _user(use)
        if not _as_call(user) or _name(_called_value(user)) != b"__kmpc_fork_call":
            return False
        use = _next_use(use)
    return bool(_first_use(function))


def _callers(function: int) -> set[bytes | None]:
    """The names of the functions whose instructions use ``function``; None for a use elsewhere
    (a constant, a global's initializer)."""
    found: set[bytes | None] = set()
    use = _first_use(function)
    while use:
        user = _user(use)
        found.add(_name(_block_function(_instruction_block(user))) if _as_instruction(user) else None)
        use = _next_use(use)
    return found


def _name(value: int) -> bytes:
    size = ctypes.c_size_t()
    return ctypes.string_at(_value_name(value, ctypes.byref(size)), size.value)


def _sized(name: bytes) -> tuple[bytes, int]:
    return name, len(name)


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
        try:
            for one in split_objects(obj):
                buffer = _buffer_copy(one, len(one), name.encode())
                _check(_add_object(jit.handle, tracker, buffer))  # owns the buffer from here on
            self.address: int = _address_of(jit, name.encode())
            # The name is unique to this program, so its bytes in the object mean the definition.
            release = _address_of(jit, _release_name(name.encode())) if _release_name(name.encode()) in obj \
                else None
        except BaseException:
            _remove(tracker, jit.strings, None)
            raise
        weakref.finalize(self, _remove, tracker, jit.strings, release).atexit = False
