"""grad's arguments outside argnums reach the function as they are, as jax's (argnums_partial
closes over them): a Python bool stays a bool for Python control flow (equinox's filter_jit
passes its static flags positionally), a concrete array keeps its value; gradients come back
in argnums' order."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import mlax
from tests.oracle import assert_same

RNG = np.random.default_rng(3539)


def _f(lib: Any) -> Any:
    def f(x: Any, flag: Any, scale: Any, y: Any) -> Any:
        assert isinstance(flag, bool)
        base = lib.numpy.sin(x) * y if flag else lib.numpy.cos(x) * y
        return (base * (2.0 if float(scale) > 0 else 3.0)).sum()
    return f


@pytest.mark.parametrize("argnums", [0, (0,), (3, 0), 3])
@pytest.mark.parametrize("jitted", [False, True])
def test_non_differentiated_arguments_as_jax(argnums: Any, jitted: bool) -> None:
    x = RNG.normal(size=(3,)).astype(np.float32)
    y = RNG.normal(size=(3,)).astype(np.float32)

    def run(lib: Any) -> Any:
        g = lib.value_and_grad(_f(lib), argnums=argnums)
        call = (lambda x, y: g(x, True, np.float32(-1.0), y)) if not jitted else \
            lib.jit(lambda x, y: g(x, True, np.float32(-1.0), y))
        return call(x, y)

    assert_same(run(mlax), run(jax), rtol=1e-6, atol=1e-6)
