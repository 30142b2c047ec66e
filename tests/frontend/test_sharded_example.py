"""examples/sharded_mlp.py: the MLP trained on a 2x2 mesh of the session's 4 CPU devices, with jit +
NamedSharding and with shard_map + psum, gives jax's losses; and on two processes of two devices."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from tests.frontend.examples import EXAMPLES, load_example


@pytest.fixture(scope="module")
def example():
    return load_example("sharded_mlp")


@pytest.mark.parametrize("how", ["jit", "shard_map"])
def test_training_matches_jax(example, how) -> None:
    import jax

    import mlax

    rng = np.random.RandomState(3)
    params, (x, y) = example.init_params(rng), example.make_data(rng)
    losses = example.train(mlax, how, params, x, y, steps=4)
    expected = example.train(jax, how, params, x, y, steps=4)
    np.testing.assert_allclose(losses, expected, rtol=1e-4)
    assert losses[-1] < losses[0]


def test_two_processes() -> None:
    """The script itself with ``--processes 2``: two processes on 127.0.0.1, each checking its
    losses against jax's (the same distributed runtime); both end by themselves."""
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, str(EXAMPLES / "sharded_mlp.py"), "--steps", "3", "--check",
                           "--processes", "2"], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("mlax and jax losses agree") == 2, done.stdout
