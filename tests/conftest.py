"""Shared fixtures: a seeded RNG per test (the seed is printed on failure)."""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator

import numpy as np
import pytest


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A generator seeded from the test's id, so failures reproduce and tests differ."""
    seed = zlib.crc32(request.node.nodeid.encode())
    return np.random.default_rng(seed)


# XLA's own LLVM at O0 for the whole run: the tests compile thousands of small programs on XLA
# (jax as the oracle, mlax's xla backend), and its O3 was about a third of their time (XLA
# emits no fast-math flags, so the optimization level does not change the numbers).
_XLA_TEST_FLAGS = "--xla_backend_optimization_level=0"


def pytest_configure(config: pytest.Config) -> None:
    if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_XLA_TEST_FLAGS}".strip()
    import jax

    jax.config.update("jax_platforms", "cpu")
    # Four XLA CPU devices for the sharding tests (must be set before jaxlib's backend starts).
    jax.config.update("jax_num_cpu_devices", 4)


@pytest.fixture
def x64() -> Iterator[None]:
    """64-bit mode for one test (mlax's switch is JAX's own jax_enable_x64)."""
    import mlax

    mlax.config.update("x64", True)
    try:
        yield
    finally:
        mlax.config.update("x64", False)
