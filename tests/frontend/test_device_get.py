"""mlax.device_get as jax.device_get: host NumPy arrays for Arrays, everything else as it is."""

from __future__ import annotations

import jax
import numpy as np

import mlax
import mlax.numpy as mnp
from tests.oracle import random_array


def test_arrays_become_read_only_numpy(rng: np.random.Generator) -> None:
    x = random_array(rng, (2, 3), np.float32)
    for backend in ("cpu", "xla"):
        tree = {"a": mlax.jit(lambda x: x * 2.0, backend=backend)(x), "b": [1, "text", None], "c": 2.5}
        got, want = mlax.device_get(tree), jax.device_get({"a": jax.numpy.asarray(x) * 2.0,
                                                           "b": [1, "text", None], "c": 2.5})
        assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
        assert type(got["a"]) is np.ndarray and not got["a"].flags.writeable
        np.testing.assert_array_equal(got["a"], want["a"])
        assert got["b"] == want["b"] and got["c"] == want["c"]


def test_jax_arrays_and_tracers(rng: np.random.Generator) -> None:
    x = random_array(rng, (4,), np.float32)
    assert type(mlax.device_get(jax.numpy.asarray(x))) is np.ndarray
    # under a trace, as jax: the tracer passes through untouched
    np.testing.assert_array_equal(np.asarray(mlax.jit(lambda v: mlax.device_get(v) + 1.0)(x)), x + 1.0)
    np.testing.assert_array_equal(mlax.device_get(mnp.asarray(x)), x)
