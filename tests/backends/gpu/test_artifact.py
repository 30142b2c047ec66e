"""The GPU artifact (backends/gpu/artifact.py) and its loader (backends/gpu/loader.py) on a machine
without a GPU: the artifact is written and read back; the loader, copied alone and run where
mlax cannot be imported, drives the stand-in driver (tests/backends/gpu/fake_libcuda.c) through exactly
the plan's allocations, copies and launches; host code the plan cannot express is refused."""

from __future__ import annotations

import ast
import json
import re
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mlir import ir

import mlax
from mlax.backends.gpu import loader as gpu_loader
from mlax.backends.gpu.artifact import export_gpu, launch_plan, save_gpu_artifact
from mlax.backends.gpu.loader import Artifact, CudaError, Driver
from mlax.dialect import get_context
from mlax.dialect.tensor_spec import TensorSpec
from tests.backends.gpu.conftest import driver_environment, run_loader_alone
from tests.oracle import random_array

LOADER = Path(gpu_loader.__file__)


def _mlp_loss(w1, x, w2):
    hidden = mlax.nn.relu(x @ w1 + 0.5)
    return (mlax.nn.log_softmax(hidden @ w2, axis=-1) ** 2).mean()


# name -> (function, argument shapes and dtypes)
PROGRAMS: dict[str, tuple[Callable, tuple[tuple[tuple[int, ...], Any], ...]]] = {
    "identity": (lambda x: x, (((6, 7), np.float32),)),
    "constants_and_bools": (
        lambda x, n: (x + np.arange(x.shape[1], dtype=np.float32), x.sum(), x > 0.5, n * 3),
        (((9, 33), np.float32), ((5,), np.int32))),
    "mlp_grad": (mlax.grad(_mlp_loss),
                 (((32, 64), np.float32), ((16, 32), np.float32), ((64, 10), np.float32))),
}


def _arguments(rng: np.random.Generator, name: str) -> list[np.ndarray]:
    return [random_array(rng, shape, dtype) for shape, dtype in PROGRAMS[name][1]]


def _artifact(rng: np.random.Generator, name: str) -> tuple[Artifact, list[np.ndarray]]:
    arguments = _arguments(rng, name)
    return export_gpu(mlax.jit(PROGRAMS[name][0], backend="gpu").lower(*arguments)), arguments


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_written_and_read_back(name: str, rng: np.random.Generator, tmp_path: Path) -> None:
    arguments = _arguments(rng, name)
    lowered = mlax.jit(PROGRAMS[name][0], backend="gpu").lower(*arguments)
    artifact = save_gpu_artifact(lowered, tmp_path / "program.mlaxgpu")
    back = Artifact.read(tmp_path / "program.mlaxgpu")
    assert back.plan == artifact.plan and back.ptx == artifact.ptx
    assert len(back.constants) == len(artifact.constants)
    for got, want in zip(back.constants, artifact.constants, strict=True):
        assert got.dtype == want.dtype and np.array_equal(got, want)
    plan = back.plan
    assert (plan["format"], plan["version"]) == ("mlax-gpu-artifact", gpu_loader.VERSION)
    signature = [(list(a.shape), np.dtype(a.dtype).name) for a in arguments]
    results = mlax.jit(PROGRAMS[name][0], backend="cpu")(*arguments)
    results = results if isinstance(results, tuple) else (results,)
    buffers = plan["buffers"]
    assert [(b["shape"], b["dtype"]) for b in buffers if b["kind"] == "input"] == signature
    assert [(b["shape"], b["dtype"]) for b in buffers if b["kind"] == "output"] == [
        (list(r.shape), np.dtype(r.dtype).name) for r in results]
    launches = [s for s in plan["steps"] if s["op"] == "launch"]
    assert len(back.ptx) == len(plan["modules"]) == len({s["module"] for s in launches})
    for step in launches:
        ptx = back.ptx[step["module"]]
        assert ".target sm_90" in ptx and f".visible .entry {step['kernel']}(" in ptx
        assert re.fullmatch(r"[A-Za-z0-9_$]+", step["kernel"])  # a PTX identifier (no '.')
        assert all(isinstance(a, int) and 0 <= a < len(buffers) or a[0] == "i64" for a in step["args"])
        assert min(step["grid"]) >= 1 and min(step["block"]) >= 1


def test_a_plan_of_another_version_is_refused(tmp_path: Path) -> None:
    Artifact({"format": "mlax-gpu-artifact", "version": 99, "modules": [], "constants": 0}, []).write(
        tmp_path / "new.mlaxgpu")
    refused = f"not a mlax-gpu-artifact of version {gpu_loader.VERSION} .found '.*' version 99"
    with pytest.raises(ValueError, match=refused):
        Artifact.read(tmp_path / "new.mlaxgpu")


def test_the_loader_imports_only_the_standard_library_and_numpy() -> None:
    imported = set()
    for node in ast.walk(ast.parse(LOADER.read_text())):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module.split(".")[0])
    # ml_dtypes only for bfloat16 buffers (it comes with jax); everything else is the stdlib.
    assert imported - {"numpy", "ml_dtypes"} <= set(sys.stdlib_module_names), imported


def test_no_driver_is_a_clear_error() -> None:
    with pytest.raises(CudaError, match="no CUDA driver/GPU on this machine"):
        Driver("libcuda_that_is_not_here.so.1")


def _parameter(argument: Any) -> str:
    if isinstance(argument, int):
        return f"b{argument}"
    kind, value = argument
    packed = struct.pack("<" + {"f32": "f", "f64": "d"}.get(kind, "q"), value)
    return str(int.from_bytes(packed[:{"i8": 1, "i16": 2, "i32": 4}.get(kind, len(packed))], "little"))


def _expected_calls(artifact: Artifact, calls: int) -> list[str]:
    """The driver calls the loader should make, buffers named b<index>: load the modules,
    allocate the inputs, outputs and constants, upload the constants, then per call upload the
    inputs, run the steps (a temporary allocated once, at its first call), download the
    outputs; at the end free every buffer."""
    plan = artifact.plan
    buffers = plan["buffers"]
    kept = [i for i, b in enumerate(buffers) if b["kind"] in ("input", "output", "constant")]
    expected = [f"load {len(text.encode())}" for text in artifact.ptx]
    expected += [f"alloc b{i} {max(buffers[i]['nbytes'], 1)}" for i in kept]
    expected += [f"htod b{i} {buffers[i]['nbytes']}" for i in kept if buffers[i]["kind"] == "constant"]
    for call in range(calls):
        expected += [f"htod b{i} {b['nbytes']}" for i, b in enumerate(buffers) if b["kind"] == "input"]
        for step in plan["steps"]:
            if step["op"] == "alloc" and call == 0:
                kept.append(step["buffer"])
                expected.append(f"alloc b{step['buffer']} {max(buffers[step['buffer']]['nbytes'], 1)}")
            elif step["op"] == "copy":
                expected.append(f"dtod b{step['dst']} b{step['src']} {step['nbytes']}")
            elif step["op"] == "launch":
                expected.append(f"launch {step['kernel']} grid {' '.join(map(str, step['grid']))} "
                                f"block {' '.join(map(str, step['block']))}")
                expected.append(" ".join(["params", *map(_parameter, step["args"])]))
        expected += [f"dtoh b{i} {b['nbytes']}" for i, b in enumerate(buffers) if b["kind"] == "output"]
    return expected + [f"free b{i}" for i in sorted(kept)]


def _named(lines: list[str], expected: list[str]) -> list[str]:
    """The log with each device pointer replaced by the buffer its allocation was expected for."""
    names: dict[str, str] = {}
    named = []
    for line, want in zip(lines, expected + [""] * len(lines), strict=False):
        words = line.split()
        if words[0] == "alloc" and want.startswith("alloc "):
            names[words[1]] = want.split()[1]
        named.append(" ".join(names.get(w, w) for w in words))
    return named


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_loader_follows_the_plan(name: str, rng: np.random.Generator, tmp_path: Path,
                                     fake_driver: Path) -> None:
    artifact, arguments = _artifact(rng, name)
    done, lines, outputs = run_loader_alone(tmp_path, fake_driver, artifact, arguments)
    assert done.returncode == 0, done.stderr
    expected = _expected_calls(artifact, calls=2)
    assert _named(lines, expected) == expected
    specs = [(b["shape"], b["dtype"]) for b in artifact.plan["buffers"] if b["kind"] == "output"]
    assert [(list(o.shape), o.dtype.name) for o in outputs] == specs * 2


def test_an_identity_round_trips_its_input(rng: np.random.Generator, tmp_path: Path,
                                           fake_driver: Path) -> None:
    artifact, arguments = _artifact(rng, "identity")
    assert [s["op"] for s in artifact.plan["steps"]] == ["copy"] and not artifact.ptx
    done, _, outputs = run_loader_alone(tmp_path, fake_driver, artifact, arguments)
    assert done.returncode == 0, done.stderr
    for output in outputs:
        np.testing.assert_array_equal(output, arguments[0])
        assert output.dtype == np.float32


def test_the_loader_command_line(rng: np.random.Generator, tmp_path: Path, fake_driver: Path) -> None:
    artifact, arguments = _artifact(rng, "identity")
    artifact.write(tmp_path / "program.mlaxgpu")
    np.savez(tmp_path / "in.npz", *arguments)
    done = subprocess.run([sys.executable, str(LOADER), str(tmp_path / "program.mlaxgpu"),
                           str(tmp_path / "in.npz"), str(tmp_path / "out.npz")],
                          capture_output=True, text=True, timeout=300,
                          env=driver_environment(fake_driver, tmp_path / "log"))
    assert done.returncode == 0 and done.stdout == "output 0: float32[6, 7]\n", done.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out.npz")["arr_0"], arguments[0])


def test_driver_errors_name_the_call(rng: np.random.Generator, tmp_path: Path, fake_driver: Path) -> None:
    artifact, arguments = _artifact(rng, "identity")
    done, _, _ = run_loader_alone(tmp_path, fake_driver, artifact, arguments, FAKE_CUDA_FAIL_ALLOC="1")
    assert done.returncode != 0
    assert "CudaError: cuMemAllocAsync failed: CUDA_ERROR_OUT_OF_MEMORY" in done.stderr


_LOOP = """
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<4xf32>) kernel { gpu.return }
  }
  func.func @f(%arg0: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c1f = arith.constant 1.0 : f32
    HOST
    return
  }
}
"""


@pytest.mark.parametrize("host, message", [
    ("scf.for %i = %c0 to %c3 step %c1 {\n gpu.launch_func @k::@k blocks in (%i, %c1, %c1) "
     "threads in (%c1, %c1, %c1) args(%arg0 : memref<4xf32>)\n }",
     "cannot express gpu.launch_func in host code: a grid or block size computed at run time"),
    ("%n = arith.addf %c1f, %c1f : f32",
     "cannot express arith.addf in host code: the plan has device allocations, copies, views"),
    ("%m = memref.alloc() : memref<4xf32>", "cannot express memref.alloc in host code"),
])
def test_host_code_the_plan_cannot_express_is_refused(host: str, message: str) -> None:
    with get_context():
        module = ir.Module.parse(_LOOP.replace("HOST", host))
        with pytest.raises(NotImplementedError, match=message) as info:
            launch_plan(module, "f", [TensorSpec((4,), np.dtype(np.float32))], [])
    assert re.match(r"-:\d+:\d+: error: the GPU artifact cannot express", str(info.value))  # located


def test_programs_the_pipeline_refuses_stay_refused(rng: np.random.Generator) -> None:
    remainder = mlax.jit(lambda x: x % 1.5, backend="gpu")
    with pytest.raises(NotImplementedError, match="floating-point remainder. needs CUDA.s libdevice"):
        export_gpu(remainder.lower(random_array(rng, (3, 4), np.float32)))


def test_the_plan_is_json(rng: np.random.Generator) -> None:
    artifact, _ = _artifact(rng, "mlp_grad")
    assert json.loads(json.dumps(artifact.plan)) == artifact.plan
    kinds = {b["kind"] for b in artifact.plan["buffers"]}
    assert kinds == {"input", "output", "temporary"}
    ops = {s["op"] for s in artifact.plan["steps"]}
    # (its row buffers' copies run inside the row kernels, mlax-gpu-row-kernels)
    assert {"alloc", "free", "launch"} <= ops <= {"alloc", "free", "copy", "launch"}


def test_ptx_names_with_dots_do_not_load(rng: np.random.Generator, tmp_path: Path, fake_driver: Path) -> None:
    """Why the artifact renames kernels: PTX identifiers have no '.', and ptxas (the driver's JIT
    too) rejects ``.entry jit.f_kernel``; the strict stand-in refuses such a module the same way."""
    artifact, arguments = _artifact(rng, "constants_and_bools")
    dotted = Artifact(json.loads(json.dumps(artifact.plan).replace("jit_lambda_kernel", "jit.lambda_kernel")),
                      [text.replace("jit_lambda_kernel", "jit.lambda_kernel") for text in artifact.ptx],
                      artifact.constants)
    done, _, _ = run_loader_alone(tmp_path, fake_driver, dotted, arguments)
    assert "CudaError: cuModuleLoadData failed: CUDA_ERROR_INVALID_PTX" in done.stderr
