"""The stand-in CUDA driver (fake_libcuda.c), built once per session with the system's C
compiler; tests that need it skip where there is none."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(__file__).with_name("fake_libcuda.c")


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
