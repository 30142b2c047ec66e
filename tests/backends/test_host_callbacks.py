"""The host-callback runtime (mlax.backends.native.host_callbacks): registry lifetime, descriptors, the
trampolines, and the layout of XLA's FFI call frame the XLA handler reads."""

from __future__ import annotations

import gc
import re
import threading
from pathlib import Path

import jax.ffi
import numpy as np
import pytest
from mlir import ir

import mlax
from mlax.backends.native import host_callbacks
from mlax.backends.native.host_callbacks import CallbackError, HostCallback
from mlax.dialect import make_context
from mlax.dialect.tensor_spec import TensorSpec
from mlax.passes.abi import encode_callback


def _callback(name: str = "cb") -> HostCallback:
    return HostCallback(lambda operands: [operands[0] * 2], name, "mlax.pure_callback")


def test_descriptor_roundtrip() -> None:
    specs_in = [TensorSpec((2, 3), np.float32), TensorSpec((), np.bool_)]
    specs_out = [TensorSpec((0, 4), mlax.numpy.bfloat16), TensorSpec((5,), np.uint32)]
    words = np.asarray(encode_callback(42, specs_in, specs_out), np.int64)
    assert host_callbacks.decode(words.ctypes.data) == (42, specs_in, specs_out, len(words))


def test_registry_holds_callbacks_weakly_beyond_the_recent_ones() -> None:
    first = _callback()
    callback_id = host_callbacks.register(first)
    assert host_callbacks.lookup(callback_id) is first
    for _ in range(host_callbacks.RECENT):  # pushes ``first`` out of the recent list
        host_callbacks.register(_callback())
    assert host_callbacks.lookup(callback_id) is first  # still held here
    del first
    gc.collect()
    with pytest.raises(CallbackError, match=f"no host callback with id {callback_id} is registered"):
        host_callbacks.lookup(callback_id)


def test_executables_hold_their_callbacks() -> None:
    f = mlax.jit(
        lambda x: mlax.pure_callback(lambda a: np.asarray(a) + 1, mlax.ShapeDtypeStruct((2,), np.float32), x),
        backend="cpu",
    )
    x = np.ones(2, np.float32)
    np.testing.assert_array_equal(f(x), [2, 2])
    for _ in range(host_callbacks.RECENT + 1):
        host_callbacks.register(_callback())
    gc.collect()
    np.testing.assert_array_equal(f(x), [2, 2])


def test_callbacks_of_names_the_declaration() -> None:
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(
            "func.func private @cb(tensor<f32>) attributes {mlax.callback = "
            '{id = 99999999 : i64, kind = "debug", ordered = false, name = "cb"}}'
        )
        with pytest.raises(
            CallbackError, match="mlax.callback declaration @cb: no host callback with id 99999999"
        ):
            host_callbacks.callbacks_of(module)


@pytest.mark.parametrize("backend", ["cpu", "xla", "interpreter"])
def test_callbacks_from_several_threads(backend: str) -> None:
    seen: list[float] = []
    lock = threading.Lock()

    def record(a):
        with lock:
            seen.append(float(a))

    f = mlax.jit(lambda x: (mlax.debug.callback(record, x), x * 2)[1], backend=backend)
    threads = [threading.Thread(target=lambda i=i: f(np.float32(i))) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seen) == [float(i) for i in range(8)]


def test_xla_ffi_offsets_match_the_header() -> None:
    """The XLA handler reads XLA_FFI_CallFrame / XLA_FFI_Buffer / XLA_FFI_Metadata at fixed
    offsets (LP64): recompute them from jaxlib's c_api.h, so a layout change fails here."""
    header = (Path(jax.ffi.include_dir()) / "xla" / "ffi" / "api" / "c_api.h").read_text()
    major = int(re.search(r"#define XLA_FFI_API_MAJOR (\d+)", header)[1])
    minor = int(re.search(r"#define XLA_FFI_API_MINOR (\d+)", header)[1])
    assert (major, minor) == host_callbacks._FFI_API_VERSION

    def fields(struct: str) -> list[str]:
        body = re.search(rf"struct {struct} {{(.*?)}};", header, re.S)[1]
        return [line.split("//")[0].strip() for line in body.splitlines() if line.split("//")[0].strip()]

    assert fields("XLA_FFI_CallFrame")[:8] == [
        "size_t struct_size;",
        "XLA_FFI_Extension_Base* extension_start;",
        "const XLA_FFI_Api* api;",
        "XLA_FFI_ExecutionContext* ctx;",
        "XLA_FFI_ExecutionStage stage;",
        "XLA_FFI_Args args;",
        "XLA_FFI_Rets rets;",
        "XLA_FFI_Attrs attrs;",
    ]
    for struct, last in (("XLA_FFI_Args", "void** args;"), ("XLA_FFI_Rets", "void** rets;")):
        assert fields(struct) == [
            "size_t struct_size;",
            "XLA_FFI_Extension_Base* extension_start;",
            "int64_t size;",
            f"{struct[:-1]}Type* types;",
            last,
        ]
    assert fields("XLA_FFI_Buffer") == [
        "size_t struct_size;",
        "XLA_FFI_Extension_Base* extension_start;",
        "XLA_FFI_DataType dtype;",
        "void* data;",
        "int64_t rank;",
        "int64_t* dims;",
    ]
    assert fields("XLA_FFI_Metadata")[:3] == [
        "size_t struct_size;",
        "XLA_FFI_Api_Version api_version;",
        "XLA_FFI_Handler_Traits traits;",
    ]
    assert "XLA_FFI_Extension_Metadata = 1" in header
    assert "XLA_FFI_ExecutionStage_EXECUTE = 3" in header
