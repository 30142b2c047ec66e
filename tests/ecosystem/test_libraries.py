"""optax, flax.linen, flax.nnx and equinox train unchanged on mlax (mlax.install_as_jax) and
match the same script on real jax: each script runs twice, in fresh processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
SCRIPTS = ["optax_training", "flax_linen_training", "flax_nnx_training", "equinox_training"]


def results(script: str, runtime: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(HERE / f"{script}.py"), runtime], capture_output=True,
                          text=True, timeout=900, cwd=HERE, env=env)
    assert done.returncode == 0, f"{script} on {runtime} failed:\n{done.stderr[-4000:]}"
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def assert_close(mlax_value, jax_value, path: str) -> None:
    if isinstance(jax_value, dict):
        assert sorted(mlax_value) == sorted(jax_value), path
        for key in jax_value:
            assert_close(mlax_value[key], jax_value[key], f"{path}.{key}")
        return
    np.testing.assert_allclose(np.asarray(mlax_value), np.asarray(jax_value), rtol=2e-5, atol=2e-6,
                               err_msg=path)


@pytest.mark.parametrize("script", SCRIPTS)
def test_library_trains_like_on_jax(script: str) -> None:
    expected = results(script, "jax")
    got = results(script, "mlax")
    assert_close(got, expected, script)
    losses = next(v for k, v in expected.items() if "losses" in k or isinstance(v, dict))
    assert losses, "the script reports its losses"
