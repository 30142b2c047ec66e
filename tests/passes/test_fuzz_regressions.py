"""Bugs tools/diff_fuzz.py found, each pinned on every backend against jax."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import mlax


@pytest.mark.parametrize("backend", ["interpreter", "cpu", "xla"])
def test_uint64_extremes_lower_to_stablehlo(backend: str, x64: None) -> None:
    # ui64 constants past 2^63 (min's identity 2^64 - 1, an and-mask) were an internal
    # TypeError in mlax-lower-to-stablehlo: the binding takes an int64.
    x = np.array([3, 2, 2**64 - 1, 8], np.uint64)
    for f, reference in [(lambda a: mlax.lax.reduce_min(a, (0,)), lambda a: jax.lax.reduce_min(a, (0,))),
                         (lambda a: mlax.lax.cummin(a, 0), lambda a: jax.lax.cummin(a, 0)),
                         (lambda a: a & np.uint64(2**64 - 2), lambda a: a & np.uint64(2**64 - 2)),
                         (mlax.numpy.argmin, jax.numpy.argmin)]:
        np.testing.assert_array_equal(mlax.jit(f, backend=backend)(x), jax.jit(reference)(x))


@pytest.mark.parametrize("backend", ["interpreter", "cpu", "xla"])
def test_grad_of_vmap_keeps_the_rule_of_an_unbatched_custom_jvp(backend: str) -> None:
    # A custom_jvp call whose operands were all unbatched was walked in place by vmap, so an
    # enclosing grad differentiated its primal: jnp.linalg.solve (whose primal stops the
    # gradient through its factorization) gave a zero gradient for the matrix.
    a = np.array([[2.0, 1.0], [0.5, 3.0]], np.float32)
    b = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    batch = np.ones(3, np.float32)
    weights = np.arange(12, dtype=np.float32).reshape(3, 2, 2)

    def loss(lib: object) -> object:
        def per_example(a: object, b: object, x: object) -> object:
            return lib.numpy.linalg.solve(a, b), lib.numpy.linalg.inv(a) * x
        batched = lib.vmap(per_example, in_axes=(None, None, 0))
        return lambda a, b, x, w: lib.numpy.sum(batched(a, b, x)[0] * w)

    got = mlax.jit(mlax.grad(loss(mlax), argnums=(0, 1)), backend=backend)(a, b, batch, weights)
    want = jax.grad(loss(jax), argnums=(0, 1))(a, b, batch, weights)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)
