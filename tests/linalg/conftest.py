"""The float types every linalg test runs in: f32, and f64 under x64."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(params=[np.float32, np.float64], ids=["f32", "f64"])
def dtype(request: pytest.FixtureRequest) -> np.dtype:
    if request.param == np.float64:
        request.getfixturevalue("x64")
    return np.dtype(request.param)
