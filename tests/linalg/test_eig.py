"""mlax.lax.linalg.eig, jnp.linalg.eig/eigvals, jnp.roots and jnp.polyfit against jax: values, NaN
patterns and dtypes eagerly (the interpreter), on the native CPU backend (LAPACK ?geev) and on XLA
(jaxlib's geev custom call); batched; vmap; derivatives of eigenvalues and (opted in) of
eigenvectors against jax and against finite differences in float64."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.lax import linalg as mlinalg
from tests.oracle import assert_same, run

BACKENDS = ["eager", "cpu", "xla"]
TOL = {"float32": 1e-4, "float64": 1e-10, "complex64": 1e-4, "complex128": 1e-10}
FLAGS = [(True, True), (False, True), (True, False), (False, False)]



def general(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Random non-symmetric matrices (real ones have conjugate pairs of eigenvalues)."""
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _eig(lin: Any, left: bool, right: bool, derivs: bool = False) -> Callable[[Any], Any]:
    return lambda a: lin.eig(a, compute_left_eigenvectors=left, compute_right_eigenvectors=right,
                             enable_eigvec_derivs=derivs)


@pytest.fixture(params=["float32", "complex64", "float64", "complex128"])
def dtype(request: pytest.FixtureRequest) -> str:
    if request.param in ("float64", "complex128"):
        request.getfixturevalue("x64")
    return request.param


@pytest.mark.parametrize("backend", BACKENDS)
def test_eig_matches_jax(rng: np.random.Generator, dtype: str, backend: str) -> None:
    """Same eigenvalues in LAPACK's order and the same normalised eigenvectors, for every
    combination of the vector flags, batched."""
    a = general(rng, (2, 5, 5), dtype)
    for left, right in FLAGS:
        expected = jax.lax.linalg.eig(a, compute_left_eigenvectors=left, compute_right_eigenvectors=right)
        got = run(_eig(mlinalg, left, right), backend, a)
        assert_same(list(got), list(expected), rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(3, 0, 0), (1, 1), (4, 4)])
def test_eig_shapes_and_failures(rng: np.random.Generator, backend: str, shape: tuple[int, ...]) -> None:
    a = general(rng, shape, np.float32)
    assert_same(list(run(_eig(mlinalg, True, True), backend, a)), list(jax.lax.linalg.eig(a)),
                rtol=1e-4, atol=1e-4)
    nan = np.full((2, 3, 3), np.nan, np.float32)
    nan[0] = general(rng, (3, 3), np.float32)
    got = run(_eig(mlinalg, False, True), backend, nan)
    expected = jax.lax.linalg.eig(nan, compute_left_eigenvectors=False)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(np.isnan(np.asarray(g)), np.isnan(np.asarray(e)))


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_vmap(rng: np.random.Generator, backend: str) -> None:
    a = general(rng, (4, 3, 4), np.float32)
    f = mlax.vmap(_eig(mlinalg, False, True), in_axes=1, out_axes=0)
    expected = jax.vmap(_eig(jax.lax.linalg, False, True), in_axes=1, out_axes=0)(a)
    assert_same(list(run(f, backend, a)), list(expected), rtol=1e-4, atol=1e-4)


def _loss(np_: Any, lin: Any, left: bool, right: bool) -> Callable[[Any], Any]:
    """A real function of every result that is invariant to nothing LAPACK fixes arbitrarily."""
    def loss(a: Any) -> Any:
        w, *vectors = _eig(lin, left, right, derivs=True)(a)
        total = np_.sum(np_.real(w) ** 2 + 0.3 * np_.imag(w))
        for k, v in enumerate(vectors):
            weights = np_.arange(v.shape[-1])
            total = total + np_.sum(np_.abs(v) ** 2 * weights) + (k + 1) * np_.sum(np_.real(v))
        return total
    return loss


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_gradients_match_jax_and_finite_differences(rng: np.random.Generator, x64: None, backend: str,
                                                    dtype: str) -> None:
    a = general(rng, (4, 4), dtype)
    for left, right in [(False, False), (True, True)]:
        grad = mlax.grad(_loss(mnp, mlinalg, left, right))
        got = run(grad, backend, a)
        assert_same(got, jax.grad(_loss(jnp, jax.lax.linalg, left, right))(a), rtol=1e-8, atol=1e-9)
        if dtype == "float64":  # central differences along a random direction
            direction, step = rng.standard_normal(a.shape), 1e-6
            f = _loss(jnp, jax.lax.linalg, left, right)
            numeric = (f(a + step * direction) - f(a - step * direction)) / (2 * step)
            np.testing.assert_allclose(np.sum(np.asarray(got) * direction), numeric, rtol=1e-5)


def test_jvp_of_vectors(rng: np.random.Generator, x64: None) -> None:
    a, t = general(rng, (2, 4, 4), np.float64), general(rng, (2, 4, 4), np.float64)
    got = mlax.jit(lambda a, t: mlax.jvp(_eig(mlinalg, True, True, True), (a,), (t,)))(a, t)
    expected = jax.jvp(_eig(jax.lax.linalg, True, True, True), (a,), (t,))
    assert_same(jax.tree_util.tree_map(np.asarray, got), expected, rtol=1e-9, atol=1e-10)


def test_vector_derivatives_need_the_opt_in(rng: np.random.Generator) -> None:
    a = general(rng, (3, 3), np.float32)
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs=True"):
        mlax.grad(lambda a: mnp.sum(mnp.abs(mlinalg.eig(a)[2])))(a)
    with pytest.raises(ValueError, match="square"):
        mlinalg.eig(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="element type"):
        mlinalg.eig(np.ones((2, 2), np.int32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_eig_and_eigvals(rng: np.random.Generator, backend: str) -> None:
    a = general(rng, (2, 4, 4), np.float32)
    got = run(mnp.linalg.eig, backend, a)
    expected = jnp.linalg.eig(a)
    assert type(got).__name__ == "EigResult" and got._fields == expected._fields
    assert_same(tuple(got), tuple(expected), rtol=1e-4, atol=1e-4)
    assert_same(run(mnp.linalg.eigvals, backend, a), jnp.linalg.eigvals(a), rtol=1e-4, atol=1e-4)
    ints = rng.integers(-3, 4, (3, 3))
    assert_same(mnp.linalg.eigvals(ints), jnp.linalg.eigvals(ints), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="must have shape"):
        mnp.linalg.eig(np.ones((2, 3), np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_roots(rng: np.random.Generator, backend: str) -> None:
    p = rng.standard_normal(6).astype(np.float32)
    padded = np.concatenate([[0.0, 0.0], p]).astype(np.float32)
    if backend == "eager":
        for q in (p, padded, np.zeros(3, np.float32), np.array([2.0], np.float32)):
            assert_same(mnp.roots(q), jnp.roots(q), rtol=1e-4, atol=1e-4)
    def keep(q: Any) -> Any:
        return mnp.roots(q, strip_zeros=False)

    assert_same(run(keep, backend, padded), jnp.roots(padded, strip_zeros=False), rtol=1e-4, atol=1e-4)


def test_roots_under_jit_needs_strip_zeros_false(rng: np.random.Generator) -> None:
    with pytest.raises(jax.errors.ConcretizationTypeError):
        mlax.jit(mnp.roots)(rng.standard_normal(4).astype(np.float32))


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_polyfit(rng: np.random.Generator, backend: str) -> None:
    x, y = rng.standard_normal(20).astype(np.float32), rng.standard_normal(20).astype(np.float32)
    ys, w = rng.standard_normal((20, 2)).astype(np.float32), rng.uniform(0.5, 1.0, 20).astype(np.float32)
    for kwargs in ({}, {"w": w}, {"full": True}, {"cov": True}, {"cov": "unscaled"}):
        for target in (y, ys):
            got = run(lambda x, t, kwargs=kwargs: mnp.polyfit(x, t, 3, **kwargs), backend, x, target)
            assert_same(got, jnp.polyfit(x, target, 3, **kwargs), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="deg >= 0"):
        mnp.polyfit(x, y, -1)
    with pytest.raises(TypeError, match="same length"):
        mnp.polyfit(x, y[:5], 2)
