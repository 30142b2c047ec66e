"""Shared fixtures: a seeded RNG per test (the seed is printed on failure)."""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator

import numpy as np
import pytest

from tests.sampling import SEED_VARIABLE, mark_unsampled_slow


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A generator seeded from the test's id, so failures reproduce and tests differ."""
    seed = zlib.crc32(request.node.nodeid.encode())
    return np.random.default_rng(seed)


def pytest_configure(config: pytest.Config) -> None:
    import jax

    jax.config.update("jax_platforms", "cpu")
    # Four XLA CPU devices for the sharding tests (must be set before jaxlib's backend starts).
    jax.config.update("jax_num_cpu_devices", 4)


@pytest.hookimpl(tryfirst=True)  # before the marker plugin deselects `-m 'not slow'`
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mark_unsampled_slow(items)


def pytest_report_header(config: pytest.Config) -> str:
    seed = os.environ.get(SEED_VARIABLE, "0")
    return f"sampled grids: seed {seed} ({SEED_VARIABLE}); the cases left out run with -m slow"


@pytest.fixture
def x64() -> Iterator[None]:
    """64-bit mode for one test (mlax's switch is JAX's own jax_enable_x64)."""
    import mlax

    mlax.config.update("x64", True)
    try:
        yield
    finally:
        mlax.config.update("x64", False)
