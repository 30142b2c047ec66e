"""checkpoint/remat with static_argnums of a function taking ``*args`` (flax's nn.remat of a
module's __call__): its positions have no parameter names, and the values match jax's."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

import mlax
from tests.oracle import assert_same


def test_static_argnums_of_varargs_function_as_jax() -> None:
    x = np.random.default_rng(3537).normal(size=(4,)).astype(np.float32)

    def run(lib: Any) -> Any:
        def f(*args: Any) -> Any:
            x, power, kwargs = args[0], args[1], args[2]
            assert isinstance(power, int)
            return lib.numpy.sin(x) ** power * kwargs

        g = lib.checkpoint(f, static_argnums=(1,))
        return g(x, 3, 2.0), lib.grad(lambda x: g(x, 2, 1.5).sum())(x)

    assert_same(run(mlax), run(jax), rtol=1e-6, atol=1e-6)
