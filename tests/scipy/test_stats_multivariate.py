"""mlax.scipy.stats.multivariate_normal and gaussian_kde against jax.scipy.stats: random
positive definite covariances, batched and broadcast shapes, scalar mean or covariance, weighted
and unweighted data in 1 to 3 dimensions, every bandwidth rule; f32 and f64 (x64); eagerly,
under mlax.jit on the native CPU backend and on XLA (the estimator passed in as a pytree);
grad and vmap against jax's; jax's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.scipy.stats as jst
import numpy as np
import pytest

import mlax
import mlax.scipy.stats as mst
from tests.fft.helpers import same

TOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-11}
BACKENDS = ["cpu", "xla"]


def _same_trees(actual: Any, expected: Any, scale: float = 1.0) -> None:
    for a, e in zip(jax.tree.leaves(actual), jax.tree.leaves(expected), strict=True):
        same(a, e, scale * TOL[np.dtype(np.asarray(e).dtype)])


def _spd(rng: np.random.Generator, batch: tuple[int, ...], n: int, dtype: Any) -> np.ndarray:
    a = rng.standard_normal((*batch, n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def _normal(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


# -- multivariate_normal ------------------------------------------------------------------------

def _mvn_cases(rng: np.random.Generator, dtype: Any) -> list[tuple[np.ndarray | float, ...]]:
    """(x, mean, cov): one and many points, batched covariances broadcast against x, n = 1,
    scalar mean, scalar covariance."""
    return [
        (_normal(rng, (3,), dtype), _normal(rng, (3,), dtype), _spd(rng, (), 3, dtype)),
        (_normal(rng, (5, 4), dtype), _normal(rng, (4,), dtype), _spd(rng, (), 4, dtype)),
        (_normal(rng, (4, 1, 2), dtype), _normal(rng, (3, 2), dtype), _spd(rng, (3,), 2, dtype)),
        (_normal(rng, (6, 1), dtype), _normal(rng, (1,), dtype), _spd(rng, (), 1, dtype)),
        (_normal(rng, (7,), dtype), np.asarray(0.5, dtype), np.asarray(2.5, dtype)),
        (_normal(rng, (5, 3), dtype), _normal(rng, (3,), dtype), np.asarray(1.7, dtype)),
    ]


def _densities(lib: Any, cases: list[tuple[Any, ...]]) -> Any:
    mvn = lib.scipy.stats.multivariate_normal
    return [(mvn.logpdf(*case), mvn.pdf(*case)) for case in cases]


def test_multivariate_normal(rng: np.random.Generator, dtype: Any) -> None:
    cases = _mvn_cases(rng, dtype)
    expected = jax.jit(lambda c: _densities(jax, c))(cases)
    _same_trees(_densities(mlax, cases), expected)
    for backend in BACKENDS:
        _same_trees(mlax.jit(lambda c: _densities(mlax, c), backend=backend)(cases), expected)
    x = np.arange(6).reshape(2, 3)  # integers promote to the default float
    _same_trees(mst.multivariate_normal.logpdf(x, np.zeros(3, np.int32), np.eye(3, dtype=np.int32)),
                jst.multivariate_normal.logpdf(x, np.zeros(3, np.int32), np.eye(3, dtype=np.int32)))


def _mvn_loss(lib: Any) -> Callable[..., Any]:
    return lambda x, mean, cov: lib.scipy.stats.multivariate_normal.logpdf(x, mean, cov).sum()


@pytest.mark.parametrize("backend", ["eager", *BACKENDS])
def test_multivariate_normal_grad(rng: np.random.Generator, backend: str) -> None:
    x, mean = _normal(rng, (5, 3), np.float32), _normal(rng, (3,), np.float32)
    cov = _spd(rng, (), 3, np.float32)
    grad = mlax.grad(_mvn_loss(mlax), argnums=(0, 1, 2))
    if backend != "eager":
        grad = mlax.jit(grad, backend=backend)
    _same_trees(grad(x, mean, cov), jax.jit(jax.grad(_mvn_loss(jax), argnums=(0, 1, 2)))(x, mean, cov), 10)


def test_multivariate_normal_vmap(rng: np.random.Generator) -> None:
    x, mean = _normal(rng, (4, 3), np.float32), _normal(rng, (3,), np.float32)
    covs = _spd(rng, (4,), 3, np.float32)

    def per_cov(lib: Any) -> Callable[..., Any]:
        return lib.vmap(lambda c: lib.scipy.stats.multivariate_normal.logpdf(x, mean, c))

    _same_trees(per_cov(mlax)(covs), jax.jit(per_cov(jax))(covs))
    _same_trees(mlax.vmap(mst.multivariate_normal.pdf, in_axes=(0, None, 0))(x, mean, covs),
                jax.vmap(jst.multivariate_normal.pdf, in_axes=(0, None, 0))(x, mean, covs))


def test_multivariate_normal_errors() -> None:
    x, mean = np.zeros((2, 3), np.float32), np.zeros(3, np.float32)
    for lib in (jst, mst):
        with pytest.raises(NotImplementedError, match="allow_singular"):
            lib.multivariate_normal.logpdf(x, mean, np.eye(3), allow_singular=True)
        with pytest.raises(ValueError, match="incompatible shapes"):
            lib.multivariate_normal.logpdf(x, mean, np.eye(2))
        with pytest.raises(ValueError, match="incompatible shapes"):
            lib.multivariate_normal.logpdf(x, mean, np.ones(3))


# -- gaussian_kde --------------------------------------------------------------------------------

def _kde_inputs(rng: np.random.Generator, dtype: Any) -> dict[str, np.ndarray]:
    return {"data1": _normal(rng, (40,), dtype), "data2": _normal(rng, (2, 30), dtype) * [[1.0], [0.5]],
            "data3": _normal(rng, (3, 25), dtype), "other2": _normal(rng, (2, 12), dtype) + 0.5,
            "weights": rng.uniform(0.2, 1.0, 30).astype(dtype), "points1": _normal(rng, (9,), dtype) * 2,
            "points2": _normal(rng, (2, 7), dtype) * 2, "points3": _normal(rng, (3, 5), dtype),
            "mean": _normal(rng, (2,), dtype), "cov": _spd(rng, (), 2, dtype) / 4}


def _kde_results(lib: Any, v: dict[str, Any]) -> Any:
    """Every method of estimators in 1, 2 and 3 dimensions with each bandwidth rule."""
    kde = lib.scipy.stats.gaussian_kde
    one = kde(v["data1"], bw_method="silverman")
    two = kde(v["data2"], weights=v["weights"])
    three = kde(v["data3"], bw_method=lambda k: 0.8 * k.neff ** (-1.0 / (k.d + 4)))
    fixed = kde(v["other2"], bw_method=0.4)
    return (jax.tree.leaves((one, two, three, fixed)),
            one(v["points1"]), one.logpdf(v["points1"]), one.integrate_box_1d(-0.5, 1.25),
            two.evaluate(v["points2"]), two.pdf(v["points2"][:, 0]), two.logpdf(v["points2"] * 5),
            two.integrate_gaussian(v["mean"], v["cov"]), two.integrate_kde(fixed), fixed.integrate_kde(two),
            three.logpdf(v["points3"]), three(v["points3"][:, 1]))


def test_gaussian_kde(rng: np.random.Generator, dtype: Any) -> None:
    inputs = _kde_inputs(rng, dtype)
    expected = jax.jit(lambda v: _kde_results(jax, v))(inputs)
    _same_trees(_kde_results(mlax, inputs), expected, 10)
    for backend in BACKENDS:
        _same_trees(mlax.jit(lambda v: _kde_results(mlax, v), backend=backend)(inputs), expected, 10)


def _draws(lib: Any, key: Any, v: dict[str, Any]) -> Any:
    kde = lib.scipy.stats.gaussian_kde
    return (kde(v["data2"], weights=v["weights"]).resample(key, (6,)), kde(v["data1"]).resample(key),
            kde(v["data3"]).resample(key, (2,)))


@pytest.mark.parametrize("backend", ["eager", *BACKENDS])
def test_gaussian_kde_resample(rng: np.random.Generator, backend: str) -> None:
    inputs = _kde_inputs(rng, np.float32)
    def draws(k: Any, v: dict[str, Any]) -> Any:
        return _draws(mlax, k, v)

    ours = draws if backend == "eager" else mlax.jit(draws, backend=backend)
    expected = jax.jit(lambda k, v: _draws(jax, k, v))(jax.random.key(5), inputs)
    _same_trees(ours(mlax.random.key(5), inputs), expected, 10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gaussian_kde_is_a_pytree(rng: np.random.Generator, backend: str) -> None:
    data, points = _normal(rng, (2, 20), np.float32), _normal(rng, (2, 6), np.float32)
    ours, theirs = mst.gaussian_kde(data), jst.gaussian_kde(data)
    leaves, tree = jax.tree_util.tree_flatten(ours)
    rebuilt = jax.tree_util.tree_unflatten(tree, leaves)
    assert type(rebuilt) is mst.gaussian_kde and (rebuilt.d, rebuilt.n) == (2, 20)
    _same_trees(mlax.jit(lambda k, p: k.logpdf(p), backend=backend)(ours, points), theirs.logpdf(points))
    returned = mlax.jit(lambda k: jax.tree.map(lambda leaf: leaf * 1, k), backend=backend)(ours)
    assert type(returned) is mst.gaussian_kde
    _same_trees(returned.evaluate(points), theirs.evaluate(points))


def _kde_loss(lib: Any) -> Callable[..., Any]:
    def loss(data: Any, weights: Any, points: Any) -> Any:
        one = lib.scipy.stats.gaussian_kde(data[0], weights=weights)
        two = lib.scipy.stats.gaussian_kde(data, weights=weights)
        return one.logpdf(points[0]).sum() + one.integrate_box_1d(-0.3, 0.9) + two.logpdf(points).sum()

    return loss


@pytest.mark.parametrize("backend", ["eager", *BACKENDS])
def test_gaussian_kde_grad(rng: np.random.Generator, backend: str) -> None:
    weights = rng.uniform(0.2, 1.0, 15).astype(np.float32)
    data, points = _normal(rng, (2, 15), np.float32), _normal(rng, (2, 4), np.float32)
    grad = mlax.grad(_kde_loss(mlax), argnums=(0, 1, 2))
    if backend != "eager":
        grad = mlax.jit(grad, backend=backend)
    _same_trees(grad(data, weights, points),
                jax.jit(jax.grad(_kde_loss(jax), argnums=(0, 1, 2)))(data, weights, points), 10)


def test_gaussian_kde_vmap(rng: np.random.Generator) -> None:
    data, points = _normal(rng, (2, 20), np.float32), _normal(rng, (5, 2, 3), np.float32)
    ours, theirs = mst.gaussian_kde(data), jst.gaussian_kde(data)
    _same_trees(mlax.vmap(ours.logpdf)(points), jax.vmap(theirs.logpdf)(points))
    datasets = _normal(rng, (3, 2, 20), np.float32)

    def per_dataset(lib: Any) -> Callable[[Any], Any]:
        return lib.vmap(lambda d: lib.scipy.stats.gaussian_kde(d).evaluate(points[0]))

    _same_trees(per_dataset(mlax)(datasets), jax.jit(per_dataset(jax))(datasets))


def _bad_kde_calls(lib: Any) -> list[tuple[type[Exception], Callable[[], Any]]]:
    kde = lib.scipy.stats.gaussian_kde
    two, one = kde(np.arange(12.0).reshape(2, 6) ** 1.5), kde(np.arange(6.0) ** 1.5)
    return [
        (NotImplementedError, lambda: kde(np.ones(4, np.complex64))),
        (ValueError, lambda: kde(np.ones(1))),
        (ValueError, lambda: kde(np.arange(6.0), weights=np.ones(5))),
        (ValueError, lambda: kde(np.arange(6.0), weights=np.ones((2, 3)))),
        (ValueError, lambda: kde(np.arange(6.0), bw_method="normal")),
        (ValueError, lambda: two.evaluate(np.ones((3, 4)))),
        (NotImplementedError, lambda: two.logpdf(np.ones((2, 4), np.complex64))),
        (ValueError, lambda: two.integrate_box_1d(0.0, 1.0)),
        (ValueError, lambda: one.integrate_box_1d(np.zeros(2), 1.0)),
        (ValueError, lambda: two.integrate_kde(one)),
        (ValueError, lambda: two.integrate_gaussian(np.zeros(3), np.eye(2))),
        (ValueError, lambda: two.integrate_gaussian(np.zeros(2), np.eye(3))),
        (NotImplementedError, lambda: two.integrate_box(np.zeros(2), np.ones(2))),
        (NotImplementedError, lambda: two.set_bandwidth("scott")),
    ]


def test_gaussian_kde_errors() -> None:
    for lib in (jax, mlax):
        for error, call in _bad_kde_calls(lib):
            with pytest.raises(error):
                call()
