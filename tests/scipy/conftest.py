"""The dtype fixture of the mlax.scipy tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import mlax


@pytest.fixture(params=["float32", "float64"])
def dtype(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The dtype of the inputs; float64 with x64 on (mlax's switch is jax's own)."""
    if request.param == "float64":
        mlax.config.update("x64", True)
        try:
            yield np.float64
        finally:
            mlax.config.update("x64", False)
    else:
        yield np.float32
