"""Fixtures shared by the front-end tests."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from jax.sharding import Mesh

import mlax

BACKENDS = ["cpu", "interpreter", "xla"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest):
    """The default backend, so eager constructs (each a jitted program of its own) use it too."""
    previous = mlax.config.backend
    mlax.config.update("backend", request.param)
    yield request.param
    mlax.config.update("backend", previous)


@pytest.fixture
def mesh() -> Mesh:
    """A 2x2 mesh ("x", "y") over the first 4 of the session's CPU devices."""
    return Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("x", "y"))
