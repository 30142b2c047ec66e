"""Fixtures for the pass tests: a fresh mlax context and module parsing."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from mlir import ir

from mlax.dialect import make_context


@pytest.fixture
def context() -> Iterator[ir.Context]:
    """A fresh context with the mlax dialect, entered with an unknown default location."""
    ctx = make_context()
    with ctx, ir.Location.unknown():
        yield ctx


@pytest.fixture
def parse(context: ir.Context) -> Callable[[str], ir.Module]:
    return lambda text: ir.Module.parse(text)
