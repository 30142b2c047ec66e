"""examples/rnn.py: a few SGD steps of the Elman RNN (a scan under jit(value_and_grad)) give
JAX's losses and parameters."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import mlax
from tests.frontend.examples import load_example


@pytest.fixture(scope="module")
def rnn():
    return load_example("rnn")


@pytest.mark.parametrize("backend", ["cpu", "xla"], indirect=True)
def test_training_matches_jax(rnn, backend) -> None:
    rng = np.random.RandomState(1)
    params = rnn.init_params(rng, inputs=2, hidden=12)
    xs, ys = rnn.make_data(rng, batch=3, sequence=20, inputs=2)
    ours, losses = rnn.train(mlax, params, xs, ys, steps=4)
    theirs, expected = rnn.train(jax, params, xs, ys, steps=4)
    np.testing.assert_allclose(losses, expected, rtol=1e-4)
    assert losses[-1] < losses[0]
    for name in params:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-4, atol=1e-6)
