"""The float types every linalg test runs in: f32, and f64 under x64; the complex ones: complex64,
and complex128 under x64."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(params=[np.float32, np.float64], ids=["f32", "f64"])
def dtype(request: pytest.FixtureRequest) -> np.dtype:
    if request.param == np.float64:
        request.getfixturevalue("x64")
    return np.dtype(request.param)


@pytest.fixture(params=[np.complex64, np.complex128], ids=["c64", "c128"])
def complex_dtype(request: pytest.FixtureRequest) -> np.dtype:
    if request.param == np.complex128:
        request.getfixturevalue("x64")
    return np.dtype(request.param)
