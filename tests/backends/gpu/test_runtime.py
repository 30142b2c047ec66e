"""The GPU JIT's runtime (backends/gpu/executable.py over backends/gpu/loader.py's driver layer) against the
stand-in driver (fake_libcuda.c, loaded in this process: its device memory is host memory, its
kernels do not run, every call is logged): one stream made once, results kept on the device
and read only when asked, device-resident inputs never copied, buffers freed when their
arrays die, host arrays kept until their upload is known done, threads calling one program,
the error without a driver. Device copies do run on the stand-in, so identities check values."""

from __future__ import annotations

import gc
import re
import shutil
import subprocess
import sys
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.array import Array
from mlax.backends.gpu import executable as gpu
from mlax.backends.gpu.artifact import export_gpu
from mlax.backends.gpu.loader import Device, DeviceBuffer, all_steps
from mlax.backends.registry import clear_compile_cache
from tests.backends.gpu.conftest import SOURCE
from tests.oracle import assert_same, random_array


class Log:
    """The stand-in's log, read in slices: `new` gives the lines since the last read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.read = 0

    def lines(self) -> list[str]:
        return self.path.read_text().splitlines() if self.path.exists() else []

    def new(self) -> list[str]:
        lines = self.lines()
        self.read, fresh = len(lines), lines[self.read:]
        return fresh


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The stand-in driver under another soname: loaded in this process as libcuda.so.1, it
    would be what a later ``CDLL("libcuda.so.1")`` finds (a missing driver would seem present)."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler to build the stand-in CUDA driver")
    library = tmp_path_factory.mktemp("stand_in") / "libcuda_stand_in.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), "-Wl,-soname,libcuda_stand_in.so",
                    str(SOURCE)], check=True)
    return library


@pytest.fixture
def log(tmp_path: Path, stand_in: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Log]:
    """gpu-jitted programs run on a fresh copy of the stand-in (a new `Device`: a new context
    and stream) that logs every call, stream included (FAKE_CUDA_VERBOSE=2)."""
    library = tmp_path / "libcuda_stand_in.so"
    shutil.copy(stand_in, library)
    monkeypatch.setattr(gpu, "DRIVER", str(library))
    for name, value in (("FAKE_CUDA_LOG", str(tmp_path / "cuda.log")), ("FAKE_CUDA_VERBOSE", "2"),
                        ("FAKE_CUDA_STRICT", "1")):
        monkeypatch.setenv(name, value)
    clear_compile_cache()  # no executable of another device
    yield Log(tmp_path / "cuda.log")
    clear_compile_cache()
    gc.collect()  # arrays of this test free their buffers while its log is still the one


def _stream(lines: list[str]) -> str:
    (created,) = [line.split()[1] for line in lines if line.startswith("stream ")]
    return created


def _pointer(array: Array) -> str:
    assert type(array) is Array and isinstance(array._device, DeviceBuffer) and array._host is None
    return str(array._device.pointer)


def test_results_stay_on_the_device_until_read(log: Log, rng: np.random.Generator) -> None:
    x, y = random_array(rng, (37, 53), np.float32), random_array(rng, (37, 53), np.float32)
    f = mlax.jit(lambda x, y: (mnp.tanh(x * y + 1.5), (x - y).sum(axis=1)), backend="gpu")
    z, s = f(x, y)
    assert (z.shape, z.dtype, s.shape, s.dtype) == ((37, 53), np.float32, (37,), np.float32)
    first = log.new()
    stream = _stream(first)
    queued = [line for line in first if line.startswith(("alloc", "free", "htod", "dtod", "launch"))]
    assert queued and all(line.endswith(f" on {stream}") for line in queued)  # all on the one stream
    assert [line.split()[2] for line in first if line.startswith("htod")][-2:] == ["7844", "7844"]
    assert not [line for line in first if line.startswith(("sync", "dtoh", "wait"))]
    uploads = [line.split()[1] for line in first if line.startswith("htod")][-2:]
    last_launch = max(i for i, line in enumerate(first) if line.startswith("launch"))
    assert [line for line in first[last_launch:] if line.startswith("free")] == [
        f"free {p} on {stream}" for p in uploads]  # the uploads go once the kernels are queued

    w, _ = f(z, z)  # device-resident inputs: no copy, the kernels read z where it is
    second = log.new()
    assert not [line for line in second if line.startswith(("htod", "stream", "sync", "dtoh", "free"))]
    assert any(_pointer(z) in line.split() for line in second if line.startswith("params"))

    where = _pointer(w)
    assert np.asarray(w).shape == (37, 53)  # read: copied out once the stream is done
    assert log.new() == [f"dtoh {where} 7844 on {stream}", f"sync {stream}"]
    np.asarray(w)
    assert log.new() == []  # the Array keeps what it read
    assert s.block_until_ready() is s and log.new() == [f"sync {stream}"]

    pointers = {_pointer(z), _pointer(s)}
    del z, s
    gc.collect()
    assert {line.split()[1] for line in log.new() if line.startswith("free")} == pointers


def test_reads_of_a_device_array(log: Log, rng: np.random.Generator) -> None:
    """An identity is a device copy, which the stand-in performs: the values come back."""
    x = random_array(rng, (6, 7), np.float32)
    y = mlax.jit(lambda x: x, backend="gpu")(x)
    assert repr(y) == repr(mlax.numpy.asarray(x))
    np.testing.assert_array_equal(np.asarray(y), x)
    assert_same(mlax.jit(lambda a: a * 2 + 1, backend="cpu")(y), x * 2 + 1)
    assert_same(y + 1, x + 1)  # an eager op
    assert_same(mnp.sum(y, axis=0), x.sum(axis=0), rtol=1e-6)
    assert y.device is Device.get(0, library=gpu.DRIVER) and y.device.chip == "sm_90"
    log.new()
    z = mlax.jit(lambda x: x, backend="gpu")(y)  # device to device, no upload
    assert [line.split()[0] for line in log.new()] == ["alloc", "dtod"]
    np.testing.assert_array_equal(np.asarray(z), x)


def test_device_arrays_handed_to_jax(log: Log, rng: np.random.Generator) -> None:
    """jax cannot take a native GPU buffer: programs on XLA, device_put and typeof read its value."""
    x = random_array(rng, (5, 4), np.float32)
    y = mlax.jit(lambda x: x, backend="gpu")(x)
    assert y._xla_buffer is None
    assert_same(mlax.jit(lambda a: a * 3 - 1, backend="xla")(y), x * 3 - 1)
    assert_same(mlax.device_put(y), x)
    assert mlax.typeof(y).shape == (5, 4)


def test_rank_0_inputs(log: Log) -> None:
    y = mlax.jit(lambda x: x, backend="gpu")(np.float32(2.5))
    assert y.shape == () and float(y) == 2.5


def test_temporaries_are_kept_and_outputs_are_new(log: Log, rng: np.random.Generator) -> None:
    from mlax.api import _executable

    loss = lambda w, x: (mlax.nn.log_softmax(mlax.nn.relu(x @ w), axis=-1) ** 2).mean()  # noqa: E731
    f = mlax.jit(mlax.grad(loss), backend="gpu")
    to_device = mlax.jit(lambda x: x, backend="gpu")
    w, x = (to_device(random_array(rng, shape, np.float32)) for shape in ((32, 10), (16, 32)))
    f(w, x)
    temporaries = [s for s in all_steps(_executable(f.lower(w, x)._entry).program.artifact.plan["steps"])
                   if s["op"] == "alloc"]
    assert temporaries and len([line for line in log.new() if line.startswith("alloc")]) > 1
    results = [f(w, x) for _ in range(3)]
    allocs = [line.split()[2] for line in log.new() if line.startswith("alloc")]
    assert allocs == ["1280"] * 3  # one output per call: the temporaries were made by the first
    assert len({_pointer(r) for r in results}) == 3


def test_the_jit_runs_the_artifacts_plan(log: Log, rng: np.random.Generator) -> None:
    from mlax.api import _executable

    f = mlax.jit(lambda x, n: (x + np.arange(33, dtype=np.float32), x.sum(), x > 0.5, n * 3), backend="gpu")
    arguments = random_array(rng, (9, 33), np.float32), random_array(rng, (5,), np.int32)
    outputs = f(*arguments)
    assert [(o.shape, o.dtype) for o in outputs] == [((9, 33), np.float32), ((), np.float32),
                                                     ((9, 33), np.bool_), ((5,), np.int32)]
    lowered = f.lower(*arguments)
    program = _executable(lowered._entry).program
    assert program.artifact.plan == export_gpu(lowered).plan


def test_host_arrays_are_kept_until_their_upload_is_done(log: Log, rng: np.random.Generator,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CUDA_PENDING", "1")  # no event has passed until the stream is waited for
    monkeypatch.setattr(Device, "PENDING", 3)
    f = mlax.jit(lambda x: x * 2, backend="gpu")
    hosts = [random_array(rng, (4, 5), np.float32) for _ in range(5)]
    kept = [weakref.ref(h) for h in hosts]
    results = [f(h) for h in hosts]
    del hosts
    gc.collect()
    assert [k() is not None for k in kept] == [False, False, True, True, True]  # the 3 newest
    assert log.new().count("wait event") == 2  # the oldest were waited for
    results[-1].block_until_ready()
    assert [k() for k in kept] == [None] * 5


def test_threads_share_one_program(log: Log, rng: np.random.Generator) -> None:
    """Eight threads make the first calls of two programs at once (each compiled and loaded
    once), then chain device-resident calls of an identity (a plan of one device copy, which
    reads and writes the program's slots): every thread gets its own values back. Threads
    switch every microsecond, so that unguarded slots would be seen mixed."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    identity = mlax.jit(lambda x: x, backend="gpu")
    scale = mlax.jit(lambda x: x * 3.0, backend="gpu")
    inputs = [random_array(rng, (3, 11), np.float32) for _ in range(8)]
    start = threading.Barrier(len(inputs))
    results: list[object] = [None] * len(inputs)

    def work(i: int) -> None:
        try:
            start.wait()
            scale(inputs[i])
            y = identity(inputs[i])
            for _ in range(20):
                y = identity(y)
                scale(y)
            results[i] = np.asarray(y)
        except BaseException as error:  # noqa: BLE001 (reported by the main thread)
            results[i] = error

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    for got, want in zip(results, inputs, strict=True):
        assert isinstance(got, np.ndarray), got
        np.testing.assert_array_equal(got, want)
    lines = log.lines()
    assert sum(line.startswith("load ") for line in lines) == 1  # scale's module, loaded once
    assert sum(line.startswith("stream ") for line in lines) == 1
    assert sum(line.startswith("launch ") for line in lines) == 8 * 21


def test_without_a_driver(rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(gpu, "DRIVER", str(tmp_path / "libcuda_not_here.so.1"))
    clear_compile_cache()
    x = random_array(rng, (5,), np.float32)
    f = mlax.jit(lambda x: x * 2, backend="gpu")
    for _ in range(2):  # not remembered as a device
        with pytest.raises(RuntimeError, match=re.escape(gpu.NO_DRIVER)):
            f(x)
    with pytest.raises(RuntimeError, match=re.escape(gpu.NO_DRIVER)):
        f.lower(x).compile()
    assert ".entry jit_lambda_kernel" in f.lower(x).as_text("binary")  # lowering needs no driver
    clear_compile_cache()


@pytest.mark.skipif(gpu.cuda_driver() is None, reason="no CUDA driver/GPU on this machine: needs a GPU")
def test_chained_device_calls_agree_with_the_cpu(rng: np.random.Generator) -> None:
    f = lambda x, w: mnp.tanh(x @ w) + x  # noqa: E731
    x, w = random_array(rng, (64, 48), np.float32), random_array(rng, (48, 48), np.float32)
    on_gpu, on_cpu = mlax.jit(f, backend="gpu"), mlax.jit(f, backend="cpu")
    assert_same(on_gpu(on_gpu(x, w), w), on_cpu(on_cpu(x, w), w), rtol=2e-5, atol=1e-5)
