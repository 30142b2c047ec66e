"""Run a saved mlax GPU program (runtime/gpu_artifact.py writes it) through the CUDA driver.

This file imports only the standard library and NumPy, never mlax or MLIR: it is copied alone
to machines that have an NVIDIA driver but not mlax's MLIR wheels (the lent GPU machine,
deployments). ``python gpu_loader.py PROGRAM.mlaxgpu [INPUTS.npz [OUTPUTS.npz]]`` runs one.

The artifact is a zip: ``plan.json`` (format name and version, the buffers with their shapes,
dtypes and sizes, and the steps of the host code: alloc, free, copy, launch), one PTX text per
kernel module (``ptx/<i>.ptx``, JIT-compiled by the driver when loaded) and the constant
arrays (``constants/<i>.npy``). `GpuProgram` loads the modules into the device's primary
context, keeps one device buffer per input, output, constant and temporary (a temporary is
allocated by its first ``alloc`` step and kept for later calls: ``free`` steps only mark the end
of its use), and launches the kernels in order on the default stream. Every CUresult is
checked; a failure raises `CudaError` with the driver's error name and the call.
"""

from __future__ import annotations

import ctypes
import io
import json
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = "mlax-gpu-artifact"
VERSION = 1
# Kernel scalar arguments: plan type -> ctypes type (index is i64 in the kernels' ABI).
SCALARS = {"i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32, "i64": ctypes.c_int64,
           "f32": ctypes.c_float, "f64": ctypes.c_double}


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
    """The few driver entry points the loader needs, from ``libcuda.so.1`` through ctypes."""

    def __init__(self, library: str = "libcuda.so.1") -> None:
        try:
            self.lib = ctypes.CDLL(library)
        except OSError as error:
            raise CudaError(f"no CUDA driver/GPU on this machine ({library}: {error})") from None
        p, u, size = ctypes.POINTER, ctypes.c_uint, ctypes.c_size_t
        vp, u64 = ctypes.c_void_p, ctypes.c_uint64
        for name, args in (("cuInit", [u]), ("cuDeviceGet", [p(ctypes.c_int), ctypes.c_int]),
                           ("cuDevicePrimaryCtxRetain", [p(vp), ctypes.c_int]),
                           ("cuDevicePrimaryCtxRelease_v2", [ctypes.c_int]), ("cuCtxSetCurrent", [vp]),
                           ("cuCtxSynchronize", []), ("cuModuleLoadData", [p(vp), ctypes.c_char_p]),
                           ("cuModuleUnload", [vp]), ("cuModuleGetFunction", [p(vp), vp, ctypes.c_char_p]),
                           ("cuMemAlloc_v2", [p(u64), size]), ("cuMemFree_v2", [u64]),
                           ("cuMemcpyHtoD_v2", [u64, vp, size]), ("cuMemcpyDtoH_v2", [vp, u64, size]),
                           ("cuMemcpyDtoD_v2", [u64, u64, size]),
                           ("cuLaunchKernel", [vp, u, u, u, u, u, u, u, vp, p(vp), p(vp)]),
                           ("cuGetErrorName", [ctypes.c_int, p(ctypes.c_char_p)])):
            function = getattr(self.lib, name)
            function.argtypes, function.restype = args, ctypes.c_int

    def __call__(self, name: str, *args: Any) -> None:
        result = getattr(self.lib, name)(*args)
        if result != 0:
            text = ctypes.c_char_p()
            known = self.lib.cuGetErrorName(result, ctypes.byref(text)) == 0 and text.value
            raise CudaError(f"{name} failed: {text.value.decode() if known else f'CUresult {result}'}")

    def alloc(self, nbytes: int) -> int:
        pointer = ctypes.c_uint64()
        self("cuMemAlloc_v2", ctypes.byref(pointer), max(nbytes, 1))
        return pointer.value


class GpuProgram:
    """A loaded artifact on one device: ``program(*arrays)`` returns the outputs as NumPy arrays;
    ``upload``, ``launch``, ``synchronize`` and ``download`` split a call for timing on
    device-resident inputs."""

    def __init__(self, artifact: Artifact | str | Path, device: int = 0,
                 driver: Driver | None = None) -> None:
        self.artifact = artifact if isinstance(artifact, Artifact) else Artifact.read(artifact)
        plan = self.artifact.plan
        self.cuda = cuda = driver or Driver()
        cuda("cuInit", 0)
        self._device = ctypes.c_int()
        cuda("cuDeviceGet", ctypes.byref(self._device), device)
        self._context = ctypes.c_void_p()
        cuda("cuDevicePrimaryCtxRetain", ctypes.byref(self._context), self._device)
        cuda("cuCtxSetCurrent", self._context)
        self._modules: list[ctypes.c_void_p] = []
        for text in self.artifact.ptx:
            self._modules.append(ctypes.c_void_p())
            cuda("cuModuleLoadData", ctypes.byref(self._modules[-1]), text.encode() + b"\0")
        self.buffers = plan["buffers"]
        # One slot per buffer holds its device pointer; kernel parameter arrays point at the slots.
        self._slots = [ctypes.c_uint64(0) for _ in self.buffers]
        for slot, buffer in zip(self._slots, self.buffers, strict=True):
            if buffer["kind"] in ("input", "output", "constant"):
                slot.value = cuda.alloc(buffer["nbytes"])
        for buffer, slot in zip(self.buffers, self._slots, strict=True):
            if buffer["kind"] == "constant":
                array = np.ascontiguousarray(self.artifact.constants[buffer["constant"]])
                cuda("cuMemcpyHtoD_v2", slot.value, array.ctypes.data, array.nbytes)
        self._steps = [self._prepare(step) for step in plan["steps"]]
        self.inputs = [b for b in range(len(self.buffers)) if self.buffers[b]["kind"] == "input"]
        self.outputs = [b for b in range(len(self.buffers)) if self.buffers[b]["kind"] == "output"]

    def _prepare(self, step: dict[str, Any]) -> tuple[Any, ...]:
        """A step with its ctypes objects built once (launch parameters point at the slots)."""
        if step["op"] != "launch":
            return (step["op"], step)
        function = ctypes.c_void_p()
        self.cuda("cuModuleGetFunction", ctypes.byref(function), self._modules[step["module"]],
                  step["kernel"].encode())
        values = [self._slots[arg] if isinstance(arg, int) else SCALARS[arg[0]](arg[1])
                  for arg in step["args"]]
        params = (ctypes.c_void_p * max(len(values), 1))(*[ctypes.addressof(v) for v in values])
        arguments = (function, *step["grid"], *step["block"], step.get("shared", 0), None, params, None)
        return ("launch", arguments, values)

    def upload(self, *arrays: np.ndarray) -> None:
        """Copy the inputs into the program's device input buffers."""
        if len(arrays) != len(self.inputs):
            raise TypeError(f"the program takes {len(self.inputs)} inputs, got {len(arrays)}")
        for i, (index, array) in enumerate(zip(self.inputs, arrays, strict=True)):
            buffer = self.buffers[index]
            array = np.ascontiguousarray(array)
            if list(array.shape) != buffer["shape"] or array.dtype != dtype(buffer["dtype"]):
                raise TypeError(f"input {i}: expected {buffer['dtype']}{buffer['shape']}, "
                                f"got {array.dtype}{list(array.shape)}")
            self.cuda("cuMemcpyHtoD_v2", self._slots[index].value, array.ctypes.data, array.nbytes)

    def launch(self) -> None:
        """Run the plan's steps (kernels are asynchronous: `synchronize` waits for them)."""
        cuda = self.cuda
        slots = self._slots
        for op, step, *_ in self._steps:
            if op == "launch":
                cuda("cuLaunchKernel", *step)
            elif op == "copy":
                cuda("cuMemcpyDtoD_v2", slots[step["dst"]].value + step["dst_offset"],
                     slots[step["src"]].value + step["src_offset"], step["nbytes"])
            elif op == "alloc" and not slots[step["buffer"]].value:
                slots[step["buffer"]].value = cuda.alloc(self.buffers[step["buffer"]]["nbytes"])

    def synchronize(self) -> None:
        self.cuda("cuCtxSynchronize")

    def download(self) -> list[np.ndarray]:
        """The outputs of the last launch, copied to the host."""
        results = []
        for index in self.outputs:
            buffer = self.buffers[index]
            array = np.empty(buffer["shape"], dtype(buffer["dtype"]))
            self.cuda("cuMemcpyDtoH_v2", array.ctypes.data, self._slots[index].value, array.nbytes)
            results.append(array)
        return results

    def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
        self.upload(*arrays)
        self.launch()
        self.synchronize()
        return self.download()

    def close(self) -> None:
        """Free every device buffer and module and release the primary context."""
        for slot in self._slots:
            if slot.value:
                self.cuda("cuMemFree_v2", slot.value)
                slot.value = 0
        for module in self._modules:
            self.cuda("cuModuleUnload", module)
        self._modules = []
        if self._context:
            self.cuda("cuDevicePrimaryCtxRelease_v2", self._device)
            self._context = ctypes.c_void_p()


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
