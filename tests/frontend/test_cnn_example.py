"""examples/cnn.py: a few SGD steps of the CNN (conv, reduce_window pooling, dense under
jit(value_and_grad)) give JAX's losses and parameters, from mlax.random's initial weights."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import mlax
from tests.frontend.examples import load_example


@pytest.fixture(scope="module")
def cnn():
    return load_example("cnn")


def test_initial_weights_are_jax_random(cnn) -> None:
    ours, theirs = cnn.init_params(mlax, seed=3), cnn.init_params(jax, seed=3)
    for name in ours:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-6, atol=1e-7, err_msg=name)


@pytest.mark.parametrize("backend", ["cpu", "xla"], indirect=True)
def test_training_matches_jax(cnn, backend) -> None:
    params = cnn.init_params(mlax, seed=1, channels=(2, 3))
    images, onehot = cnn.make_data(np.random.RandomState(1), batch=5)
    ours, losses = cnn.train(mlax, params, images, onehot, steps=3)
    theirs, expected = cnn.train(jax, params, images, onehot, steps=3)
    np.testing.assert_allclose(losses, expected, rtol=1e-4)
    assert losses[-1] < losses[0]
    for name in params:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-4, atol=1e-6)
