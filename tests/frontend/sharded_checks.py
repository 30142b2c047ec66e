"""What the tests of sharded programs share: the two backends a program with a mesh runs on
(XLA, where output shardings are compared, and the interpreter), random inputs, and the
comparison with jax (the 2x2 ``mesh`` fixture is in conftest.py)."""

from __future__ import annotations

import jax
import numpy as np

MESH_BACKENDS = ["xla", "interpreter"]


def floats(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def check_like_jax(ours, theirs, backend: str, rtol: float = 1e-5) -> None:
    """Same tree, values and dtypes; on XLA also jax's output sharding."""
    assert jax.tree_util.tree_structure(ours) == jax.tree_util.tree_structure(theirs)
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-5)
        assert a.dtype == b.dtype and a.shape == b.shape
        if backend == "xla":
            assert a.sharding.is_equivalent_to(b.sharding, b.ndim), (a.sharding, b.sharding)
