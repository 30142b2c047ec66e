"""backends/gpu/device_check.py as far as a machine without a GPU goes: ``prepare`` (small sizes)
writes the artifacts (the scan's plan a host loop around its kernels), expected results and
manifest, and copies the script and the loader; ``run``, from the prepared folder alone where
mlax cannot be imported, goes through the stand-in driver (kernels do not run there, so every
computed result must be reported as a mismatch, with its figures) and jax on this CPU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mlax
from mlax.backends.gpu import device_check as gpu_device_check
from mlax.backends.gpu.loader import Artifact, all_steps
from tests.backends.gpu.conftest import driver_environment


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("check") / "artifacts"
    gpu_device_check.prepare(folder, mlax, small=True)
    return folder


def test_prepare_writes_every_program(prepared: Path) -> None:
    manifest = json.loads((prepared / "manifest.json").read_text())
    assert manifest["small"] and list(manifest["programs"]) == list(gpu_device_check.PROGRAMS)
    refused = {name for name, entry in manifest["programs"].items() if "refused" in entry}
    assert not refused
    scan = Artifact.read(prepared / "scan.mlaxgpu").plan
    assert [s["op"] for s in scan["steps"]].count("loop") == 1
    copied = {"gpu_loader.py", "gpu_device_check.py", "device_programs.py"}
    assert copied <= {p.name for p in prepared.iterdir()}
    for name, entry in manifest["programs"].items():
        if name in refused:
            assert not (prepared / f"{name}.mlaxgpu").exists()
            continue
        plan = Artifact.read(prepared / f"{name}.mlaxgpu").plan
        args = gpu_device_check.inputs(name, [tuple(s) for s in entry["inputs"]], entry["dtype"])
        assert [(b["shape"], b["dtype"]) for b in plan["buffers"] if b["kind"] == "input"] == [
            (list(a.shape), a.dtype.name) for a in args]
        assert entry["kernels"] == sum(s["op"] == "launch" for s in all_steps(plan["steps"])) > 0
        expected = np.load(prepared / f"{name}.expected.npz")
        assert len(entry["outputs"]) == len([k for k in expected.files if k.startswith("out")])
    assert manifest["programs"]["matmul_bf16"]["outputs"] == [[[33, 17], "bfloat16"]]


def test_inputs_are_the_same_on_both_sides() -> None:
    first = gpu_device_check.inputs("mlp", [(3, 4), (4,)], "float32")
    again = gpu_device_check.inputs("mlp", [(3, 4), (4,)], "float32")
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert gpu_device_check.inputs("matmul_bf16", [(2, 2)], "bfloat16")[0].dtype.name == "bfloat16"


def test_large_results_are_sampled() -> None:
    big = np.arange(gpu_device_check.WHOLE // 4 + 1, dtype=np.float32)
    kept = gpu_device_check._kept([np.ones(3, np.float32), big])
    assert np.array_equal(kept["out0"], np.ones(3)) and "idx0" not in kept
    assert kept["out1"].size == gpu_device_check.SAMPLE and np.array_equal(big[kept["idx1"]], kept["out1"])


def test_run_with_the_stand_in_driver(prepared: Path, tmp_path: Path, fake_driver: Path) -> None:
    argv = ["check", "run", str(prepared), str(tmp_path / "out"), "--repeats", "2"]
    script = str(prepared / "gpu_device_check.py")
    code = ("import sys; sys.modules['mlax'] = None; import runpy; "
            f"sys.argv = {argv!r}; runpy.run_path({script!r}, run_name='__main__')")
    environment = driver_environment(fake_driver, tmp_path / "cuda.log", JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment,
                          cwd=tmp_path, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr  # kernels do not run on the stand-in
    report = json.loads((tmp_path / "out" / "gpu_device_check.json").read_text())
    assert report["platform"] == "cpu" and report["small"]
    programs = report["programs"]
    assert list(programs) == list(gpu_device_check.PROGRAMS)
    for name, row in programs.items():
        assert not row["ok"] and row["ratio"] > 0 and row["load_s"] >= 0, (name, row)
        assert row["problems"][0].startswith("result 0 against the CPU backend: max error"), row
    table = done.stdout.splitlines()
    assert table[0].split() == ["program", "mlax", "us", "jax", "us", "ratio"]
    assert not any("REFUSED" in line for line in table)
    launches = sum(line.startswith("launch ") for line in (tmp_path / "cuda.log").read_text().splitlines())
    plans = [Artifact.read(prepared / f"{name}.mlaxgpu").plan for name in programs]
    # each program: one checked call, two timed ones
    assert launches == 3 * sum(_launches(plan["steps"]) for plan in plans)


def _launches(steps: list[dict]) -> int:
    """The kernel launches of one call of a plan whose loops have constant bounds (the scan's)."""
    count = 0
    for step in steps:
        if step["op"] == "loop":
            trips = len(range(step["lower"][1], step["upper"][1], step["step"][1]))
            count += trips * _launches(step["body"])
        count += step["op"] == "launch"
    return count
