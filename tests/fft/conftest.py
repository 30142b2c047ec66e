"""The input-dtype fixture of the FFT tests."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fft.helpers import DTYPES


@pytest.fixture(params=list(DTYPES), ids=list(DTYPES))
def dtype(request: pytest.FixtureRequest) -> Any:
    """Each input dtype; the 64-bit ones under x64."""
    if request.param in ("f64", "c128"):
        request.getfixturevalue("x64")
    return DTYPES[request.param]
