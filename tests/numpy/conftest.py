"""Fixtures of the mlax.numpy tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import mlax


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def x64(request: pytest.FixtureRequest) -> Iterator[bool]:
    """In tests/numpy, ``x64`` runs a test in both 64-bit modes (the root conftest's runs x64
    only); it yields whether x64 is on."""
    saved = mlax.config.x64_enabled
    mlax.config.update("x64", request.param)
    try:
        yield request.param
    finally:
        mlax.config.update("x64", saved)
