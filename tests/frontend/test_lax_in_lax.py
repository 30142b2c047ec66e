"""lax's composites are written in lax, below mlax.numpy (tests/test_frontend_imports.py keeps the
cycle from coming back): the helpers they share (moveaxis, broadcast_select, the logaddexp of
mlax.lax.special) and the composites rewritten on them, against numpy and jax on random values,
eagerly and under jit."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.lax import special
from mlax.lax.decompositions import symmetrize
from mlax.lax.elementwise import broadcast_select
from mlax.lax.shape import moveaxis
from tests.oracle import random_array

RNG = np.random.default_rng(37)


@pytest.mark.parametrize(("shape", "source", "destination"), [
    ((2, 3, 4), 0, -1), ((2, 3, 4, 5), (-2, -1), (0, 2)), ((3,), 0, 0), ((2, 3, 4), (0, 1), (1, 0))])
def test_moveaxis_is_numpys(shape: tuple[int, ...], source: object, destination: object) -> None:
    x = random_array(RNG, shape, np.float32)
    expected = np.moveaxis(x, source, destination)
    np.testing.assert_array_equal(np.asarray(moveaxis(x, source, destination)), expected)
    jitted = mlax.jit(lambda v: moveaxis(v, source, destination))
    np.testing.assert_array_equal(np.asarray(jitted(x)), expected)


def test_broadcast_select_broadcasts_as_where() -> None:
    pred = RNG.random((3, 1)) > 0.5
    x, y = random_array(RNG, (4,), np.float32), random_array(RNG, (), np.float32)
    expected = np.where(pred, x, y)
    for f in (broadcast_select, mlax.jit(broadcast_select)):
        out = f(pred, x, y)
        assert out.dtype == np.float32
        np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize(("ours", "theirs"), [(special.logaddexp, jnp.logaddexp),
                                              (special.logaddexp2, jnp.logaddexp2)])
def test_lax_logaddexp_is_jnps(ours: object, theirs: object) -> None:
    """Values with infinities and NaN, and jax's derivative (equal arguments share it evenly)."""
    specials = (np.array([np.inf, -np.inf, np.nan, 1.5], np.float32),
                np.array([np.inf, -np.inf, 0.0, 1.5], np.float32))
    a, b = (np.concatenate([random_array(RNG, (6,), np.float32), s]) for s in specials)
    # ulps apart from jax's formula: absolutely (a result near 0 has no relative precision)
    np.testing.assert_allclose(np.asarray(ours(a, b)), np.asarray(theirs(a, b)), rtol=1e-6, atol=1e-6)
    assert ours(a, b).dtype == np.float32
    x = np.float32(0.75)
    for argnum in (0, 1):
        np.testing.assert_allclose(np.asarray(mlax.grad(ours, argnums=argnum)(x, x)),
                                   np.asarray(jax.grad(theirs, argnums=argnum)(x, x)), rtol=1e-6)
    # mlax.numpy's logaddexp is the same function after promotion: a weak Python scalar stays weak.
    assert mnp.logaddexp(2.0, 3.0).weak_type == jnp.logaddexp(2.0, 3.0).weak_type


@pytest.mark.parametrize("batch", [(), (3,)])
def test_lu_pivots_to_permutation_is_jaxs(batch: tuple[int, ...]) -> None:
    size, k = 6, 4
    pivots = RNG.integers(0, size, (*batch, k)).astype(np.int32)
    pivots = np.maximum(pivots, np.arange(k, dtype=np.int32))  # LAPACK's pivots: row i with a row >= i
    expected = jax.lax.linalg.lu_pivots_to_permutation(pivots, size)
    for f in (mlax.lax.linalg.lu_pivots_to_permutation,
              mlax.jit(mlax.lax.linalg.lu_pivots_to_permutation, static_argnums=1)):
        out = f(pivots, size)
        assert out.dtype == expected.dtype
        np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.int32])
def test_symmetrize_and_vector_triangular_solve_are_jaxs(dtype: type) -> None:
    x = random_array(RNG, (2, 4, 4), dtype)
    ours, theirs = symmetrize(x), jnp.true_divide(x + jnp.conj(jnp.swapaxes(x, -1, -2)), 2)
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
    if dtype is np.int32:
        return
    a = np.tril(random_array(RNG, (4, 4), dtype)) + 4 * np.eye(4, dtype=dtype)
    b = random_array(RNG, (4,), dtype)
    for left_side in (True, False):
        np.testing.assert_allclose(
            np.asarray(mlax.lax.linalg.triangular_solve(a, b, left_side=left_side, lower=True)),
            np.asarray(jax.lax.linalg.triangular_solve(a, b, left_side=left_side, lower=True)), rtol=1e-5)


def test_broadcast_like_and_pbroadcast() -> None:
    x, like = random_array(RNG, (3, 1), np.float32), np.zeros((2, 3, 4), np.float32)
    np.testing.assert_array_equal(np.asarray(mlax.lax.broadcast_like(x, like)), np.broadcast_to(x, (2, 3, 4)))
    values = random_array(RNG, (4, 3), np.float32)
    out = mlax.vmap(lambda v: mlax.lax.pbroadcast(v, "i", 2), axis_name="i")(values)
    expected = jax.vmap(lambda v: jax.lax.pbroadcast(v, "i", 2), axis_name="i")(values)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))
