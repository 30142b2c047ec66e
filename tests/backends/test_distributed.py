"""mlax.distributed: two processes on 127.0.0.1 (a free port) join one group of 2 x 2 CPU
devices and run a per-device program partitioned over all four (a psum across each process's
devices) and a sharded jit; each process checks the shards it holds
(tests/backends/distributed_worker.py). Both end by themselves; a timeout bounds the wait."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 240


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("partitioner", ["shardy", pytest.param("gspmd", marks=pytest.mark.slow)])
def test_two_processes_run_one_sharded_program(partitioner: str) -> None:
    """The short form (CI) with jax's default partitioner; -m slow adds GSPMD's."""
    coordinator = f"127.0.0.1:{_free_port()}"
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)
    command = [sys.executable, "-m", "tests.backends.distributed_worker", coordinator, "2"]
    children = [subprocess.Popen([*command, str(i), partitioner], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True) for i in range(2)]
    outputs = []
    try:
        for child in children:
            out, _ = child.communicate(timeout=TIMEOUT_S)
            outputs.append(out)
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    for i, (child, out) in enumerate(zip(children, outputs, strict=True)):
        assert child.returncode == 0, f"process {i} failed (exit {child.returncode}):\n{out[-4000:]}"
        assert f"process {i}: ok" in out
