"""Run a saved mlax GPU program (backends/gpu/artifact.py writes it) through the CUDA driver.

This file imports only the standard library and NumPy, never mlax or MLIR: it is copied alone
to machines that have an NVIDIA driver but not mlax's MLIR wheels (the lent GPU machine,
deployments). ``python gpu_loader.py PROGRAM.mlaxgpu [INPUTS.npz [OUTPUTS.npz]]`` runs one.

The artifact is a zip: ``plan.json`` (format name and version, the buffers with their shapes,
dtypes and sizes, and the steps of the host code: alloc, free, copy, launch, host loops and
branches with their scalar arithmetic, predicates read from device memory; backends/gpu/plan.py
describes them), one PTX text per kernel module (``ptx/<i>.ptx``, JIT-compiled by the driver
when loaded) and the constant arrays (``constants/<i>.npy``). `GpuProgram` loads the modules
into the device's primary context, keeps one device buffer per constant and the allocations
of each temporary (an ``alloc`` step takes one its ``free`` step gave back, else allocates:
a loop's carry and its next value are two, and later calls allocate nothing) and queues the
kernels in order on the device's one stream (`Device`: shared by every program of
the process, mlax's JIT included); `GpuProgram.run` takes and returns device buffers, so
results stay on the device until read (`DeviceBuffer`). Every CUresult is checked; a failure
raises `CudaError` with the driver's error name and the call.
"""

from __future__ import annotations

import collections
import ctypes
import io
import json
import operator
import sys
import threading
import weakref
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = "mlax-gpu-artifact"
LIBRARY = "libcuda.so.1"  # the CUDA driver
VERSION = 2
# Kernel scalar arguments: plan type -> ctypes type (index is i64 in the kernels' ABI).
SCALARS = {"i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32, "i64": ctypes.c_int64,
           "f32": ctypes.c_float, "f64": ctypes.c_double}


def _div(a: int, b: int) -> int:
    """Integer division rounding toward zero, as arith.divsi (Python's // rounds down)."""
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def _signed(a: int, bits: int) -> int:
    """The low ``bits`` of ``a`` as a signed integer (bools stay 0/1)."""
    a &= (1 << bits) - 1
    return a - (1 << bits) if bits > 1 and a >> (bits - 1) else a


def _unsigned(compare: Any) -> Any:
    return lambda a, b: int(compare(a & (1 << 64) - 1, b & (1 << 64) - 1))


# The host scalar functions of the plan's "set" steps (integers; bools are 0 and 1).
FUNCTIONS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "and": operator.and_,
             "or": operator.or_, "xor": operator.xor, "div": _div, "rem": lambda a, b: a - b * _div(a, b),
             "min": min, "max": max, "select": lambda c, a, b: a if c else b, "copy": lambda a: a,
             "trunc": _signed, "sext": lambda a, bits: _signed(a, bits) if bits > 1 else -(a & 1),
             "eq": lambda a, b: int(a == b), "ne": lambda a, b: int(a != b), "slt": lambda a, b: int(a < b),
             "sle": lambda a, b: int(a <= b), "sgt": lambda a, b: int(a > b), "sge": lambda a, b: int(a >= b),
             "ult": _unsigned(operator.lt), "ule": _unsigned(operator.le), "ugt": _unsigned(operator.gt),
             "uge": _unsigned(operator.ge)}


def all_steps(steps: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every step of a plan's step list, those nested in loops and branches included."""
    for step in steps:
        yield step
        for key in ("body", "before", "after", "then", "else"):
            yield from all_steps(step.get(key, []))


def dtype(name: str) -> np.dtype:
    """NumPy's dtype for a plan's dtype name; bfloat16 and the float8s come from ml_dtypes
    (installed with jax), which NumPy lacks."""
    try:
        return np.dtype(name)
    except TypeError:
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))


@dataclass
class Artifact:
    """A compiled GPU program: the launch plan, the PTX of each module, the constant arrays."""

    plan: dict[str, Any]
    ptx: list[str]
    constants: list[np.ndarray] = field(default_factory=list)

    def write(self, path: str | Path) -> None:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("plan.json", json.dumps(self.plan, indent=1))
            for i, text in enumerate(self.ptx):
                archive.writestr(f"ptx/{i}.ptx", text)
            for i, array in enumerate(self.constants):
                data = io.BytesIO()
                np.save(data, array, allow_pickle=False)
                archive.writestr(f"constants/{i}.npy", data.getvalue())

    @classmethod
    def read(cls, path: str | Path) -> Artifact:
        with zipfile.ZipFile(path) as archive:
            plan = json.loads(archive.read("plan.json"))
            if plan.get("format") != FORMAT or plan.get("version") != VERSION:
                raise ValueError(f"{path}: not a {FORMAT} of version {VERSION} "
                                 f"(found {plan.get('format')!r} version {plan.get('version')!r})")
            ptx = [archive.read(f"ptx/{i}.ptx").decode() for i in range(len(plan["modules"]))]
            constants = [np.load(io.BytesIO(archive.read(f"constants/{i}.npy")), allow_pickle=False)
                         for i in range(plan["constants"])]
        return cls(plan, ptx, constants)


class CudaError(RuntimeError):
    """A CUDA driver call that did not return CUDA_SUCCESS."""


class Driver:
    """The driver entry points the loader needs, from ``libcuda.so.1`` (or ``library``) through
    ctypes; calling it checks the CUresult."""

    def __init__(self, library: str = LIBRARY) -> None:
        try:
            self.lib = ctypes.CDLL(library)
        except OSError as error:
            raise CudaError(f"no CUDA driver/GPU on this machine ({library}: {error})") from None
        self.library = library
        p, u, size = ctypes.POINTER, ctypes.c_uint, ctypes.c_size_t
        vp, u64, i = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int
        for name, args in (("cuInit", [u]), ("cuDeviceGet", [p(i), i]),
                           ("cuDeviceGetAttribute", [p(i), i, i]),
                           ("cuDeviceGetDefaultMemPool", [p(vp), i]), ("cuMemPoolSetAttribute", [vp, i, vp]),
                           ("cuDevicePrimaryCtxRetain", [p(vp), i]),
                           ("cuDevicePrimaryCtxRelease_v2", [i]), ("cuCtxSetCurrent", [vp]),
                           ("cuCtxSynchronize", []), ("cuModuleLoadData", [p(vp), ctypes.c_char_p]),
                           ("cuModuleUnload", [vp]), ("cuModuleGetFunction", [p(vp), vp, ctypes.c_char_p]),
                           ("cuStreamCreate", [p(vp), u]), ("cuStreamSynchronize", [vp]),
                           ("cuEventCreate", [p(vp), u]), ("cuEventRecord", [vp, vp]),
                           ("cuEventQuery", [vp]), ("cuEventSynchronize", [vp]),
                           ("cuMemAllocAsync", [p(u64), size, vp]), ("cuMemFreeAsync", [u64, vp]),
                           ("cuMemcpyHtoDAsync_v2", [u64, vp, size, vp]),
                           ("cuMemcpyDtoHAsync_v2", [vp, u64, size, vp]),
                           ("cuMemcpyDtoDAsync_v2", [u64, u64, size, vp]),
                           ("cuLaunchKernel", [vp, u, u, u, u, u, u, u, vp, p(vp), p(vp)]),
                           ("cuGetErrorName", [i, p(ctypes.c_char_p)])):
            try:
                function = getattr(self.lib, name)
            except AttributeError:
                raise CudaError(f"the CUDA driver {library} has no {name}: the driver of CUDA 11.2 or "
                                "newer is needed") from None
            function.argtypes, function.restype = args, ctypes.c_int

    def __call__(self, name: str, *args: Any) -> None:
        result = getattr(self.lib, name)(*args)
        if result != 0:
            raise CudaError(f"{name} failed: {self.error_name(result)}")

    def error_name(self, result: int) -> str:
        text = ctypes.c_char_p()
        known = self.lib.cuGetErrorName(result, ctypes.byref(text)) == 0 and text.value
        return text.value.decode() if known else f"CUresult {result}"


class Device:
    """One GPU as every program of the process shares it: its primary context (made current in
    each thread that calls through it) and one stream, on which all kernels, copies,
    allocations and frees go in order (``cuMemAllocAsync``/``cuMemFreeAsync``: a buffer freed
    while kernels that read it are queued stays valid until they ran). Nothing waits for the
    stream but `synchronize` and `download`. An upload's host array is kept alive until an event
    recorded after its copy has passed (at most `PENDING` are kept: then the oldest is waited
    for). `get` makes one per device and driver, for the life of the process."""

    PENDING = 64
    platform = "gpu"
    _made: dict[tuple[str, int], Device] = {}
    _making = threading.Lock()

    @classmethod
    def get(cls, ordinal: int = 0, driver: Driver | None = None, library: str = LIBRARY) -> Device:
        """The device ``ordinal`` of ``driver`` (else of the driver in ``library``)."""
        key = (driver.library if driver else library, ordinal)
        with cls._making:
            if key not in cls._made:
                cls._made[key] = cls(ordinal, driver or Driver(library))
            return cls._made[key]

    def __init__(self, ordinal: int, driver: Driver) -> None:
        self.id = ordinal
        self.cuda = cuda = driver
        cuda("cuInit", 0)
        handle = ctypes.c_int()
        cuda("cuDeviceGet", ctypes.byref(handle), ordinal)
        self._context = ctypes.c_void_p()
        cuda("cuDevicePrimaryCtxRetain", ctypes.byref(self._context), handle)
        self._thread = threading.local()
        self.current()
        capability = [ctypes.c_int(), ctypes.c_int()]
        for value, attribute in zip(capability, (75, 76), strict=True):  # COMPUTE_CAPABILITY_MAJOR/MINOR
            cuda("cuDeviceGetAttribute", ctypes.byref(value), attribute, handle)
        self.chip = f"sm_{capability[0].value}{capability[1].value}"
        # The pool behind cuMemAllocAsync keeps freed memory for later allocations (by default
        # it gives it back to the system at every synchronization).
        pool, keep = ctypes.c_void_p(), ctypes.c_uint64(2**64 - 1)
        cuda("cuDeviceGetDefaultMemPool", ctypes.byref(pool), handle)
        cuda("cuMemPoolSetAttribute", pool, 4, ctypes.byref(keep))  # CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
        self.stream = ctypes.c_void_p()
        # Flags 0 (not NON_BLOCKING): synchronous driver calls on the legacy default stream
        # still wait for this stream's work.
        cuda("cuStreamCreate", ctypes.byref(self.stream), 0)
        self._kept: collections.deque[tuple[ctypes.c_void_p, Any]] = collections.deque()
        self._events: list[ctypes.c_void_p] = []  # passed events, recorded again by later uploads
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"GpuDevice(id={self.id}, chip={self.chip})"

    def current(self) -> None:
        """Make the device's context current in this thread (once per thread)."""
        if not getattr(self._thread, "current", False):
            self.cuda("cuCtxSetCurrent", self._context)
            self._thread.current = True

    def alloc(self, nbytes: int) -> int:
        self.current()
        pointer = ctypes.c_uint64()
        self.cuda("cuMemAllocAsync", ctypes.byref(pointer), max(nbytes, 1), self.stream)
        return pointer.value

    def free(self, pointer: int) -> None:
        self.current()
        self.cuda("cuMemFreeAsync", pointer, self.stream)

    def upload(self, pointer: int, array: np.ndarray) -> None:
        """Queue a copy of the C-contiguous ``array`` to device memory at ``pointer``."""
        self.current()
        self.cuda("cuMemcpyHtoDAsync_v2", pointer, array.ctypes.data, array.nbytes, self.stream)
        with self._lock:
            event = self._events.pop() if self._events else None
        if event is None:
            event = ctypes.c_void_p()
            self.cuda("cuEventCreate", ctypes.byref(event), 2)  # CU_EVENT_DISABLE_TIMING
        self.cuda("cuEventRecord", event, self.stream)
        with self._lock:
            self._kept.append((event, array))
            while self._kept:
                event = self._kept[0][0]
                if not self._passed(event):
                    if len(self._kept) <= self.PENDING:
                        break
                    self.cuda("cuEventSynchronize", event)
                self._kept.popleft()
                self._events.append(event)

    def _passed(self, event: ctypes.c_void_p) -> bool:
        result = self.cuda.lib.cuEventQuery(event)
        if result not in (0, 600):  # CUDA_ERROR_NOT_READY: still queued
            raise CudaError(f"cuEventQuery failed: {self.cuda.error_name(result)}")
        return result == 0

    def copy(self, dst: int, src: int, nbytes: int) -> None:
        self.current()
        self.cuda("cuMemcpyDtoDAsync_v2", dst, src, nbytes, self.stream)

    def download(self, pointers: Sequence[int], arrays: Sequence[np.ndarray]) -> None:
        """Copy device buffers into the C-contiguous ``arrays``, waiting for the stream."""
        self.current()
        for pointer, array in zip(pointers, arrays, strict=True):
            self.cuda("cuMemcpyDtoHAsync_v2", array.ctypes.data, pointer, array.nbytes, self.stream)
        self.synchronize()

    def synchronize(self) -> None:
        """Wait for everything queued on the stream; uploads' host arrays are let go."""
        self.current()
        self.cuda("cuStreamSynchronize", self.stream)
        with self._lock:
            self._events.extend(event for event, _ in self._kept)
            self._kept.clear()


class DeviceBuffer:
    """An array in a device's memory (a result of `GpuProgram.run`), freed in stream order when
    it dies; reading it (``np.asarray``) waits for the stream and copies it to the host. mlax
    Arrays hold one as their device buffer (jax.Array's few attributes they use are here)."""

    sharding = None  # no jax sharding describes a device jax does not know
    is_fully_replicated = is_fully_addressable = True

    def __init__(self, device: Device, pointer: int, shape: Sequence[int], dtype: np.dtype) -> None:
        self.device = device
        self.pointer = pointer
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self._free = weakref.finalize(self, device.free, pointer)
        self._free.atexit = False  # the driver may be gone at exit; the process frees it all

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        host = np.empty(self.shape, self.dtype)
        self.device.download([self.pointer], [host])
        return host if dtype is None else host.astype(dtype)

    def block_until_ready(self) -> DeviceBuffer:
        self.device.synchronize()
        return self

    def __repr__(self) -> str:
        return f"DeviceBuffer({self.dtype.name}{list(self.shape)} on {self.device})"


class GpuProgram:
    """A loaded artifact on one device (its modules loaded, its constants uploaded, its
    temporaries kept across calls). ``program(*arrays)`` returns the outputs as NumPy arrays;
    ``upload``, ``launch``, ``synchronize`` and ``download`` split a call for timing on the
    program's own input and output buffers (``own_io``); `run` calls it on device buffers the
    caller owns (the JIT's device-resident arrays), waiting for nothing."""

    def __init__(self, artifact: Artifact | str | Path, device: int = 0,
                 driver: Driver | None = None, own_io: bool = True) -> None:
        self.artifact = artifact if isinstance(artifact, Artifact) else Artifact.read(artifact)
        plan = self.artifact.plan
        self.device = Device.get(device, driver)
        self.cuda = cuda = self.device.cuda
        self.device.current()
        self._modules: list[ctypes.c_void_p] = []
        for text in self.artifact.ptx:
            self._modules.append(ctypes.c_void_p())
            cuda("cuModuleLoadData", ctypes.byref(self._modules[-1]), text.encode() + b"\0")
        self.buffers = plan["buffers"]
        # One slot per buffer holds its device pointer; kernel parameter arrays point at the slots.
        self._slots = [ctypes.c_uint64(0) for _ in self.buffers]
        kept = ("input", "output", "constant") if own_io else ("constant",)
        for slot, buffer in zip(self._slots, self.buffers, strict=True):
            if buffer["kind"] in kept:
                slot.value = self.device.alloc(buffer["nbytes"])
        for buffer, slot in zip(self.buffers, self._slots, strict=True):
            if buffer["kind"] == "constant":
                array = np.asarray(self.artifact.constants[buffer["constant"]], order="C")
                self.device.upload(slot.value, array)
        self._registers = [0] * plan.get("registers", 0)  # the host scalars of the steps
        self._pools: dict[int, list[int]] = {}  # temporary slot -> its freed allocations, reused
        self._origin: dict[int, int] = {}  # an allocation's pointer -> the temporary slot it was made for
        self._steps = [self._prepare(step) for step in plan["steps"]]
        self.inputs = [b for b in range(len(self.buffers)) if self.buffers[b]["kind"] == "input"]
        self.outputs = [b for b in range(len(self.buffers)) if self.buffers[b]["kind"] == "output"]
        self._lock = threading.Lock()  # one call at a time fills the slots and queues the steps

    def _prepare(self, step: dict[str, Any]) -> tuple[Any, ...]:
        """A step with its ctypes objects built once (launch parameters point at the slots and
        at holders of the host scalars passed), nested step lists prepared too."""
        op = step["op"]
        nested = {"loop": ("body",), "while": ("before", "after"), "if": ("then", "else")}.get(op)
        if nested:
            return (op, step, *([self._prepare(s) for s in step[key]] for key in nested))
        if op == "read":
            return (op, step, np.empty((), dtype(step["dtype"])))
        if op != "launch":
            return (op, step)
        function = ctypes.c_void_p()
        self.cuda("cuModuleGetFunction", ctypes.byref(function), self._modules[step["module"]],
                  step["kernel"].encode())
        values = [self._slots[arg] if isinstance(arg, int) else SCALARS[arg["type"]]()
                  if isinstance(arg, dict) else SCALARS[arg[0]](arg[1]) for arg in step["args"]]
        scalars = [(value, arg["register"]) for value, arg in zip(values, step["args"], strict=True)
                   if isinstance(arg, dict)]
        params = (ctypes.c_void_p * max(len(values), 1))(*[ctypes.addressof(v) for v in values])
        arguments = (function, *step["grid"], *step["block"], step.get("shared", 0), self.device.stream,
                     params, None)
        return ("launch", arguments, values, scalars)

    def upload(self, *arrays: np.ndarray) -> None:
        """Copy the inputs into the program's device input buffers."""
        if len(arrays) != len(self.inputs):
            raise TypeError(f"the program takes {len(self.inputs)} inputs, got {len(arrays)}")
        for i, (index, array) in enumerate(zip(self.inputs, arrays, strict=True)):
            buffer = self.buffers[index]
            array = np.asarray(array, order="C")  # C order, rank 0 kept (ascontiguousarray gives 1-D)
            if list(array.shape) != buffer["shape"] or array.dtype != dtype(buffer["dtype"]):
                raise TypeError(f"input {i}: expected {buffer['dtype']}{buffer['shape']}, "
                                f"got {array.dtype}{list(array.shape)}")
            self.device.upload(self._slots[index].value, array)

    def run(self, inputs: Sequence[int]) -> list[int]:
        """Queue one call on the device buffers ``inputs`` (read in place, never copied) and
        return its outputs: new device buffers the caller owns (`Device.free` them). Nothing
        waits; calls from several threads take turns at filling the slots and queueing."""
        if len(inputs) != len(self.inputs):
            raise TypeError(f"the program takes {len(self.inputs)} inputs, got {len(inputs)}")
        outputs = [self.device.alloc(self.buffers[index]["nbytes"]) for index in self.outputs]
        indices = self.inputs + self.outputs
        with self._lock:
            own = [self._slots[index].value for index in indices]
            for index, pointer in zip(indices, [*inputs, *outputs], strict=True):
                self._slots[index].value = pointer
            try:
                self.launch()  # kernel parameters are read when a launch is queued
            except BaseException:
                for pointer in outputs:
                    self.device.free(pointer)
                raise
            finally:
                for index, pointer in zip(indices, own, strict=True):
                    self._slots[index].value = pointer
        return outputs

    def launch(self) -> None:
        """Run the plan's steps (kernels are asynchronous: `synchronize` waits for them; a
        predicate's read waits for the kernels before it)."""
        self._execute(self._steps)

    def _value(self, operand: list[Any]) -> Any:
        return operand[1] if operand[0] == "c" else self._registers[operand[1]]

    def _execute(self, steps: list[tuple[Any, ...]]) -> None:  # noqa: C901 - one case per step kind
        cuda, slots, registers, value = self.cuda, self._slots, self._registers, self._value
        for op, step, *prepared in steps:
            if op == "launch":
                for holder, register in prepared[1]:
                    holder.value = registers[register]
                cuda("cuLaunchKernel", *step)
            elif op == "copy":
                self.device.copy(slots[step["dst"]].value + step["dst_offset"],
                                 slots[step["src"]].value + step["src_offset"], step["nbytes"])
            elif op == "alloc":  # a temporary's earlier allocation if free, kept across calls
                pool = self._pools.setdefault(step["buffer"], [])
                pointer = pool.pop() if pool else self.device.alloc(self.buffers[step["buffer"]]["nbytes"])
                self._origin[pointer] = step["buffer"]
                slots[step["buffer"]].value = pointer
            elif op == "free":  # back to its slot's pool: stream order keeps queued readers safe
                pointer = slots[step["buffer"]].value
                self._pools[self._origin[pointer]].append(pointer)
            elif op == "set":
                registers[step["dst"]] = FUNCTIONS[step["fn"]](*map(value, step["args"]))
            elif op == "pointer":
                registers[step["dst"]] = slots[step["buffer"]].value
            elif op == "read":  # a predicate: a few bytes, after the kernels queued before
                self.device.download([slots[step["buffer"]].value + step["offset"]], [prepared[0]])
                read = prepared[0]
                registers[step["dst"]] = read.item() if read.dtype.kind == "f" else int(read)
            elif op == "view":
                slots[step["dst"]].value = slots[step["src"]].value + value(step["offset"])
            elif op == "move":  # a parallel assignment: every source is read first
                pointers = [slots[src].value + offset for _, src, offset in step["buffers"]]
                numbers = [value(source) for _, source in step["registers"]]
                for (dst, _, _), pointer in zip(step["buffers"], pointers, strict=True):
                    slots[dst].value = pointer
                for (dst, _), number in zip(step["registers"], numbers, strict=True):
                    registers[dst] = number
            elif op == "loop":
                for i in range(value(step["lower"]), value(step["upper"]), value(step["step"])):
                    registers[step["iv"]] = i
                    self._execute(prepared[0])
            elif op == "while":
                while True:
                    self._execute(prepared[0])
                    if not value(step["predicate"]):
                        break
                    self._execute(prepared[1])
            elif op == "if":
                self._execute(prepared[0] if value(step["predicate"]) else prepared[1])

    def synchronize(self) -> None:
        self.device.synchronize()

    def download(self) -> list[np.ndarray]:
        """The outputs of the last launch, copied to the host (after the stream is done)."""
        results = [np.empty(self.buffers[i]["shape"], dtype(self.buffers[i]["dtype"])) for i in self.outputs]
        self.device.download([self._slots[i].value for i in self.outputs], results)
        return results

    def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
        with self._lock:
            self.device.current()
            self.upload(*arrays)
            self.launch()
            return self.download()

    def close(self) -> None:
        """Free the program's device buffers and unload its modules, once its queued work is
        done (the device, its context and stream stay for other programs)."""
        self.device.synchronize()
        for index, slot in enumerate(self._slots):
            owned = self._pools.pop(index, [])  # a temporary's allocations; value slots own nothing
            if self.buffers[index]["kind"] in ("input", "output", "constant") and slot.value:
                owned.append(slot.value)
            for pointer in owned:
                self.device.free(pointer)
            slot.value = 0
        for module in self._modules:
            self.cuda("cuModuleUnload", module)
        self._modules = []


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    program = GpuProgram(argv[0])
    stored = np.load(argv[1]) if len(argv) > 1 else {}
    inputs = [stored[f"arr_{i}"] for i in range(len(program.inputs)) if f"arr_{i}" in stored]
    outputs = program(*inputs)
    program.close()
    if len(argv) > 2:
        np.savez(argv[2], *outputs)
    for i, array in enumerate(outputs):
        print(f"output {i}: {array.dtype}{list(array.shape)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
