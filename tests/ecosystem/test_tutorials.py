"""JAX tutorial code (tutorials.py) prints the same on mlax, with install_as_jax, as on jax."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
NUMBER = re.compile(r"-?\d+\.?\d*(?:e[-+]?\d+)?")


def printed(runtime: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(HERE / "tutorials.py"), runtime], capture_output=True,
                          text=True, timeout=600, cwd=HERE, env=env)
    assert done.returncode == 0, f"tutorials.py on {runtime} failed:\n{done.stderr[-4000:]}"
    lines, in_jaxpr = [], False
    for line in done.stdout.splitlines():
        if line.startswith("jaxpr "):
            in_jaxpr = True
        elif in_jaxpr and not line.startswith(" "):
            in_jaxpr = False
        if not in_jaxpr:
            lines.append(line)
    return lines


def test_tutorial_code_prints_what_jax_prints() -> None:
    expected, got = printed("jax"), printed("mlax")
    assert len(got) == len(expected), "\n".join(got)
    for mine, theirs in zip(got, expected, strict=True):
        assert NUMBER.sub("#", mine) == NUMBER.sub("#", theirs), (mine, theirs)
        np.testing.assert_allclose([float(n) for n in NUMBER.findall(mine)],
                                   [float(n) for n in NUMBER.findall(theirs)], rtol=1e-5, atol=1e-6,
                                   err_msg=mine)
