"""The stand-in CUDA driver (fake_libcuda.c), built once per session with the system's C
compiler; tests that need it skip where there is none."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mlax.backends.gpu import executable as gpu
from mlax.backends.gpu import loader as gpu_loader

SOURCE = Path(__file__).with_name("fake_libcuda.c")
needs_gpu = pytest.mark.skipif(gpu.cuda_driver() is None,
                               reason="no CUDA driver/GPU on this machine: the GPU run tests need one")


@pytest.fixture(scope="session")
def fake_driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the stand-in ``libcuda.so.1`` (put it on LD_LIBRARY_PATH)."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler to build the stand-in CUDA driver")
    folder = tmp_path_factory.mktemp("fake_cuda")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(folder / "libcuda.so.1"), "-Wl,-soname,libcuda.so.1",
                    str(SOURCE)], check=True)
    return folder


def driver_environment(driver: Path, log: Path, **extra: str) -> dict[str, str]:
    """The environment of a process that loads the stand-in driver, logging every call
    (FAKE_CUDA_VERBOSE) and loading only PTX that ptxas would parse (FAKE_CUDA_STRICT)."""
    return {**os.environ, "LD_LIBRARY_PATH": str(driver), "FAKE_CUDA_LOG": str(log),
            "FAKE_CUDA_VERBOSE": "1", "FAKE_CUDA_STRICT": "1", **extra}


_RUN_ALONE = """
import sys, numpy as np
sys.modules["mlax"] = None  # as on the GPU machine: no mlax, no MLIR
sys.path.insert(0, sys.argv[1])
import gpu_loader
stored = np.load(sys.argv[3])
program = gpu_loader.GpuProgram(sys.argv[2])
outputs = [program(*[stored[f"arr_{i}"] for i in range(len(program.inputs))]) for _ in range(2)]
program.close()
np.savez(sys.argv[4], *[o for call in outputs for o in call])
"""


def run_loader_alone(tmp_path: Path, driver: Path, artifact: Any, inputs: list[np.ndarray],
                     **environment: str) -> tuple[subprocess.CompletedProcess, list[str], list[np.ndarray]]:
    """Run the loader, copied alone into a folder (no mlax, no MLIR), twice on ``inputs`` with the
    stand-in driver: the process, the driver's log and the outputs of both calls."""
    alone = tmp_path / "alone"
    alone.mkdir(exist_ok=True)
    shutil.copy(gpu_loader.__file__, alone / "gpu_loader.py")
    artifact.write(tmp_path / "program.mlaxgpu")
    np.savez(tmp_path / "inputs.npz", *inputs)
    log = tmp_path / "cuda.log"
    log.unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-c", _RUN_ALONE, str(alone), str(tmp_path / "program.mlaxgpu"),
                           str(tmp_path / "inputs.npz"), str(tmp_path / "outputs.npz")],
                          env=driver_environment(driver, log, **environment), capture_output=True, text=True,
                          timeout=300)
    lines = log.read_text().splitlines() if log.exists() else []
    outputs = []
    if done.returncode == 0:
        stored = np.load(tmp_path / "outputs.npz")
        outputs = [stored[f"arr_{i}"] for i in range(len(stored.files))]
    return done, lines, outputs
