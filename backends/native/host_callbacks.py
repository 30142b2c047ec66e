"""Host callbacks at run time: the registry of Python functions compiled code calls, and the
one C entry point per backend that calls them.

A `mlax.callback` declaration (dialect/callbacks.py) names a callback by id. The registry maps
ids to `HostCallback`s through weak references, plus a bounded list of the most recently
registered (so a callback lives from its trace until a program is compiled); each executable
holds strong references to the callbacks its program names (`callbacks_of`), so they stay as
long as some compiled program uses them, and no longer.

Compiled code describes each call with one array of int64, the *descriptor*
(`mlax.passes.abi.encode_callback` writes it, `decode` reads it). The CPU road
passes the descriptor followed by the n_in + n_out buffer addresses to `cpu_trampoline`'s
``void(int64_t *record)``; the XLA road passes the descriptor as the first operand of a
custom call to `HOST_CALLBACK`, an XLA typed-FFI handler ``XLA_FFI_Error *(XLA_FFI_CallFrame *)``
(read with ctypes at the offsets of xla/ffi/api/c_api.h; a test pins them).

An exception in a callback cannot unwind through compiled code: the trampoline keeps it, and
the executable raises it when the program returns (`raise_pending`), as a `CallbackError`
whose cause is the user's exception.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import itertools
import threading
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from jax.errors import JaxRuntimeError
from mlir import ir

from mlax.dialect.callbacks import callback_declarations
from mlax.dialect.tensor_spec import TensorSpec
from mlax.passes.abi import CALLBACK_DTYPES, HOST_CALLBACK

RECENT = 1024  # callbacks kept alive after registration, before any program holds them



class CallbackError(JaxRuntimeError):
    """A host callback failed (it raised, returned the wrong shapes or dtypes, or is missing):
    jax raises its runtime error here too (``jax.errors.JaxRuntimeError``, a RuntimeError, which
    libraries catch: equinox's filter_jit turns an error_if's into its EquinoxRuntimeError)."""


@dataclass(eq=False)
class HostCallback:
    """One registered Python function: ``function(operands)`` on NumPy operands returns the
    flat results (ignored for debug callbacks). ``api`` names it in messages."""

    function: Callable[[list[np.ndarray]], Sequence[Any]]
    name: str
    api: str
    id: int = field(default=-1)

    def __call__(self, operands: list[np.ndarray], results: Sequence[TensorSpec] | None) -> list[np.ndarray]:
        """Call it; check the results against ``results`` (None: a debug callback, nothing
        comes back)."""
        try:
            outs = self.function(operands)
        except Exception as error:
            raise CallbackError(
                f"{self.api}: the callback {self.name} raised {type(error).__name__}: {error}"
            ) from error
        return [] if results is None else check_results(self, outs, results)


def check_results(
    callback: HostCallback, outs: Sequence[Any], specs: Sequence[TensorSpec]
) -> list[np.ndarray]:
    """``outs`` as NumPy arrays of ``specs``; jax's messages for a wrong count, shape or dtype."""
    outs = list(outs)
    where = f"{callback.api} (the callback {callback.name}): "
    if len(outs) != len(specs):
        raise CallbackError(
            f"{where}Mismatched number of outputs from callback. Expected: {len(specs)}, Actual: {len(outs)}"
        )
    arrays = []
    for i, (out, spec) in enumerate(zip(outs, specs, strict=True)):
        array = np.asarray(out)
        if array.shape != spec.shape:
            raise CallbackError(
                f"{where}Incorrect output shape for return value #{i}: "
                f"Expected: {spec.shape}, Actual: {array.shape}"
            )
        if array.dtype != spec.dtype:
            raise CallbackError(
                f"{where}Incorrect output dtype for return value #{i}: "
                f"Expected: {spec.dtype}, Actual: {array.dtype}"
            )
        arrays.append(array)
    return arrays


_LOCK = threading.Lock()
_CALLBACKS: weakref.WeakValueDictionary[int, HostCallback] = weakref.WeakValueDictionary()
_RECENT: deque[HostCallback] = deque(maxlen=RECENT)
_IDS = itertools.count()
_PENDING: dict[int, BaseException] = {}


class _Registering(threading.local):
    """The callbacks this thread registered since `registered_meanwhile` began (None: not asked)."""

    def __init__(self) -> None:
        self.log: list[HostCallback] | None = None


_REGISTERING = _Registering()


def register(callback: HostCallback) -> int:
    """Give ``callback`` an id, under which compiled code reaches it."""
    with _LOCK:
        callback.id = next(_IDS)
        _CALLBACKS[callback.id] = callback
        _RECENT.append(callback)
    if _REGISTERING.log is not None:
        _REGISTERING.log.append(callback)
    return callback.id


@contextlib.contextmanager
def registered_meanwhile() -> Iterator[list[HostCallback]]:
    """The callbacks this thread registers inside the block: those of rules a pass traces while
    a program is lowered (a custom_jvp rule's variant), which the program calls too, so their
    errors are the program's (`raise_pending`) and the executable holds them."""
    saved, _REGISTERING.log = _REGISTERING.log, []
    log = _REGISTERING.log
    try:
        yield log
    finally:
        _REGISTERING.log = saved
        if saved is not None:
            saved.extend(log)


def lookup(callback_id: int, where: str = "") -> HostCallback:
    """The callback registered as ``callback_id``; CallbackError if this process has none."""
    with _LOCK:
        callback = _CALLBACKS.get(callback_id)
    if callback is None:
        raise CallbackError(
            f"{where or 'mlax.callback'}: no host callback with id {callback_id} is "
            "registered in this process (callbacks are Python functions of the process "
            "that traced the program; a module read from text cannot bring them)"
        )
    return callback


def callbacks_of(module: ir.Module | ir.Operation) -> list[HostCallback]:
    """The callbacks ``module``'s declarations name (for an executable to hold); CallbackError
    naming the declaration for an id this process does not have."""
    found = []
    for name, (_, transform) in callback_declarations(module.operation).items():
        found.append(lookup(transform.fields["id"], f"mlax.callback declaration @{name}"))
    return found


def raise_pending(callbacks: Sequence[HostCallback]) -> None:
    """Raise the first error a call of one of ``callbacks`` from compiled code kept, if any."""
    if not _PENDING:
        return
    with _LOCK:
        errors = [_PENDING.pop(c.id) for c in callbacks if c.id in _PENDING]
    if errors:
        raise errors[0]


def _keep(callback_id: int, error: BaseException) -> None:
    with _LOCK:
        _PENDING.setdefault(callback_id, error)


def interpreter_rule(transform: Any, call: ir.Operation) -> Callable[..., list[np.ndarray]]:
    """How the interpreter runs a call of a callback declaration: a pure callback whose results
    are all unused is not called (jax drops it), a debug or io one always is."""
    callback = lookup(transform.fields["id"], f"mlax.callback declaration @{transform.name}")
    specs = [TensorSpec.from_mlir(r.type) for r in call.results]
    if transform.fields["kind"] == "debug":
        return lambda *args: callback([np.asarray(a) for a in args], None)
    if transform.fields["kind"] == "pure" and all(not list(r.uses) for r in call.results):
        return lambda *args: [np.zeros(s.shape, s.dtype) for s in specs]
    return lambda *args: callback([np.asarray(a) for a in args], specs)


# Descriptors.


def _words(address: int) -> Callable[[int], int]:
    return lambda i: ctypes.c_int64.from_address(address + 8 * i).value


def decode(address: int) -> tuple[int, list[TensorSpec], list[TensorSpec], int]:
    """(id, operand specs, result specs, length in words) of the descriptor at ``address``."""
    word = _words(address)
    callback_id, n_in, n_out = word(0), word(1), word(2)
    specs, i = [], 3
    for _ in range(n_in + n_out):
        dtype, rank = CALLBACK_DTYPES[word(i)], word(i + 1)
        specs.append(TensorSpec(tuple(word(i + 2 + d) for d in range(rank)), dtype))
        i += 2 + rank
    return callback_id, specs[:n_in], specs[n_in:], i


def _view(address: int, spec: TensorSpec) -> np.ndarray:
    """The buffer at ``address`` as an array of ``spec`` (no copy)."""
    nbytes = spec.size * spec.dtype.itemsize
    if nbytes == 0:
        return np.empty(spec.shape, spec.dtype)
    raw = (ctypes.c_char * nbytes).from_address(address)
    return np.frombuffer(raw, dtype=spec.dtype).reshape(spec.shape)


def _run(descriptor: int, inputs: Sequence[int], outputs: Callable[[int], list[int]]) -> None:
    """Call the callback a descriptor names on the buffers at ``inputs``, writing its results
    to the buffers ``outputs(n_out)`` gives (buffers past the descriptor's counts are ordering
    tokens, ignored); errors are kept for `raise_pending`."""
    callback_id = -1
    try:
        callback_id, in_specs, out_specs, _ = decode(descriptor)
        callback = lookup(callback_id)
        operands = [_view(a, s).copy() for a, s in zip(inputs[: len(in_specs)], in_specs, strict=True)]
        results = callback(operands, out_specs if out_specs else None)
        for address, spec, value in zip(
            outputs(len(out_specs))[: len(out_specs)], out_specs, results, strict=True
        ):
            if spec.size:
                _view(address, spec)[...] = value
    except BaseException as error:  # compiled code cannot unwind: kept and raised on return
        _keep(callback_id, error)


def _cpu_entry(record: int) -> None:
    _, in_specs, out_specs, length = decode(record)
    word = _words(record)
    n_in = len(in_specs)
    addresses = [word(length + i) for i in range(n_in + len(out_specs))]
    _run(record, addresses[:n_in], lambda n: addresses[n_in:])


def _word(address: int, offset: int) -> int:
    return ctypes.c_int64.from_address(address + offset).value


# Offsets into XLA's FFI structs (xla/ffi/api/c_api.h, FFI API 0.x): XLA_FFI_CallFrame's
# extension_start, stage, args.size, args.args, rets.args; XLA_FFI_Buffer's data; the metadata
# extension's type and metadata pointer; XLA_FFI_Metadata's api_version.major/minor and traits.
_FRAME_EXTENSION, _FRAME_STAGE, _ARGS_SIZE, _ARGS, _RETS_SIZE, _RETS = 8, 32, 56, 72, 96, 112
_BUFFER_DATA, _EXTENSION_TYPE, _EXTENSION_METADATA = 24, 8, 24
_METADATA_MAJOR, _METADATA_MINOR, _METADATA_TRAITS = 24, 28, 32
_FFI_API_VERSION = (0, 3)
_EXECUTE, _METADATA_EXTENSION = 3, 1


def _buffers(frame: int, size: int, array: int) -> list[int]:
    pointers = _word(frame, array)
    return [_word(_word(pointers, 8 * i), _BUFFER_DATA) for i in range(_word(frame, size))]


def _xla_entry(frame: int) -> None:
    """XLA's typed-FFI handler: answers the metadata query (the FFI version it was written
    for), and at execution runs the callback on the custom call's buffers."""
    extension = _word(frame, _FRAME_EXTENSION)
    if extension and ctypes.c_int.from_address(extension + _EXTENSION_TYPE).value == _METADATA_EXTENSION:
        metadata = _word(extension, _EXTENSION_METADATA)
        ctypes.c_int.from_address(metadata + _METADATA_MAJOR).value = _FFI_API_VERSION[0]
        ctypes.c_int.from_address(metadata + _METADATA_MINOR).value = _FFI_API_VERSION[1]
        ctypes.c_uint32.from_address(metadata + _METADATA_TRAITS).value = 0
        return None
    if ctypes.c_int.from_address(frame + _FRAME_STAGE).value != _EXECUTE:
        return None
    descriptor, *inputs = _buffers(frame, _ARGS_SIZE, _ARGS)
    outputs = _buffers(frame, _RETS_SIZE, _RETS)
    _run(descriptor, inputs, lambda n: outputs)
    return None  # success: a null XLA_FFI_Error*


_CPU_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_XLA_TYPE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
_CPU_FUNCTION = _CPU_TYPE(_cpu_entry)
_XLA_FUNCTION = _XLA_TYPE(_xla_entry)


def cpu_symbols() -> dict[str, int]:
    """{symbol: address} of the CPU road's entry point, for the JIT to define."""
    return {HOST_CALLBACK: ctypes.cast(_CPU_FUNCTION, ctypes.c_void_p).value}


@functools.cache
def register_xla_target() -> None:
    """Register `HOST_CALLBACK` with XLA's CPU client (once per process)."""
    import jax.ffi

    jax.ffi.register_ffi_target(HOST_CALLBACK, jax.ffi.pycapsule(_XLA_FUNCTION), platform="cpu",
                                api_version=1)
