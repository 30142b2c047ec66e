"""Fixtures shared by the front-end tests."""

from __future__ import annotations

import pytest

import mlax

BACKENDS = ["cpu", "interpreter", "xla"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest):
    """The default backend, so eager constructs (each a jitted program of its own) use it too."""
    previous = mlax.config.backend
    mlax.config.update("backend", request.param)
    yield request.param
    mlax.config.update("backend", previous)
