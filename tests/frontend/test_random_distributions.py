"""mlax.random's distributions (pyfront/random_distributions.py, random_rejection.py) against
jax.random: the same key gives the same samples -- integers and the discrete samplers bit for
bit, floats within a few ulp (a transcendental function rounding differently, wald within the
cancellation of its formula) -- eagerly, under mlax.jit on every backend, under mlax.vmap over
keys, in float32 and float64; gradients of the gamma family against jax's; jax's errors.

Programs holding the gamma family's rejection loops take 15-60 s each to compile on two shared
cores; the default run keeps one of each kind (jit, eager, vmap, x64, grad) and the broader
mixes (parameter broadcasting, typed keys, zero sizes, the gamma-based samplers) are slow."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import jax
import jax.random as jr
import numpy as np
import pytest

import mlax
import mlax.random as mr
from tests.frontend.conftest import BACKENDS

RNG = np.random.default_rng(0)
A = RNG.uniform(0.1, 5.0, (3, 4)).astype(np.float32)
LAM = np.array([0.5, 3.0, 9.9, 10.0, 25.0, 400.0, 0.0, np.nan], np.float32)
COUNT = np.array([5.0, 20.0, 100.0, 1000.0, 3.0, 50.0, -1.0, np.inf], np.float32)
PROB = np.array([0.1, 0.3, 0.5, 0.9, 0.7, 0.02, 0.5, 0.5], np.float32)

# name -> (draw(r, key), tolerance in ulp; 0: exact)
CASES: dict[str, tuple[Callable[[Any, Any], Any], float]] = {
    "cauchy": (lambda r, k: r.cauchy(k, (5, 3)), 4),
    "exponential": (lambda r, k: r.exponential(k, (5, 3)), 4),
    "laplace": (lambda r, k: r.laplace(k, (5, 3)), 4),
    "logistic": (lambda r, k: r.logistic(k, (5, 3)), 4),
    "pareto": (lambda r, k: r.pareto(k, A), 4),
    "weibull_min": (lambda r, k: r.weibull_min(k, 2.0, A), 4),
    "rayleigh": (lambda r, k: r.rayleigh(k, A, (2, 3, 4)), 4),
    "geometric": (lambda r, k: r.geometric(k, A / 6), 0),
    "triangular": (lambda r, k: r.triangular(k, -1.0, A / 6, 1.5), 4),
    "lognormal": (lambda r, k: r.lognormal(k, 0.7, (3, 2)), 8),
    "maxwell": (lambda r, k: r.maxwell(k, (3, 2)), 4),
    "double_sided_maxwell": (lambda r, k: r.double_sided_maxwell(k, 1.0, A[0], (3,)), 8),
    "wald": (lambda r, k: r.wald(k, A), 1024),  # x = mean + ... - ... cancels: ulp errors grow ~100x
    "rademacher": (lambda r, k: r.rademacher(k, (10,)), 0),
    "gamma": (lambda r, k: r.gamma(k, A), 16),
    "loggamma": (lambda r, k: r.loggamma(k, A / 10), 32),
    "beta": (lambda r, k: r.beta(k, A[:, :1], 2.0, (2, 3, 4)), 16),
    "dirichlet": (lambda r, k: r.dirichlet(k, A), 16),
    "t": (lambda r, k: r.t(k, A), 32),
    "chisquare": (lambda r, k: r.chisquare(k, A), 16),
    "f": (lambda r, k: r.f(k, A, 3.0), 32),
    "generalized_normal": (lambda r, k: r.generalized_normal(k, 1.5, (6,)), 16),
    "ball": (lambda r, k: r.ball(k, 3, 2, (4,)), 32),
    "poisson": (lambda r, k: r.poisson(k, LAM), 0),
    "binomial": (lambda r, k: r.binomial(k, COUNT, PROB), 0),
    "multinomial": (lambda r, k: r.multinomial(k, 50.0, np.array([0.2, 0.3, 0.5], np.float32)), 0),
}
# the samplers without a gamma inside compile in a second; those with one in ~5-20 s
FAST = [name for name in CASES if name not in
        {"loggamma", "beta", "dirichlet", "t", "chisquare", "f", "generalized_normal", "ball"}]


def assert_samples(actual: Any, expected: Any, ulps: float) -> None:
    """Same shape and dtype; exact, or within ``ulps`` ulp relative (NaN where jax has NaN)."""
    a, e = np.asarray(actual), np.asarray(expected)
    assert (a.shape, a.dtype) == (e.shape, e.dtype)
    if ulps == 0 or a.dtype.kind != "f":
        np.testing.assert_array_equal(a, e)
    else:
        np.testing.assert_allclose(a, e, rtol=ulps * np.finfo(a.dtype).eps, atol=0, equal_nan=True)


def _compare(name: str, seeds: tuple[int, ...] = (0, 7), transform: Callable[..., Any] = mlax.jit) -> None:
    draw, ulps = CASES[name]
    expected_fn = jax.jit(lambda k: draw(jr, k))
    actual_fn = transform(lambda k: draw(mr, k))
    for seed in seeds:
        assert_samples(actual_fn(mr.PRNGKey(seed)), expected_fn(jr.PRNGKey(seed)), ulps)


@pytest.mark.parametrize("name", FAST)
def test_same_key_same_samples(name: str) -> None:
    _compare(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(CASES) - set(FAST)))
def test_same_key_same_samples_gamma_based(name: str) -> None:
    _compare(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["t", "dirichlet"])
def test_gamma_based_one_seed(name: str) -> None:
    _compare(name, seeds=(3,))


@pytest.mark.parametrize("name", ["exponential", "wald", "geometric", "gamma", "poisson", "binomial"])
def test_x64(x64: None, name: str) -> None:
    """Float64 samples (the default dtype under x64) from float32 parameters."""
    _compare(name, seeds=(1,))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_x64_every_sampler(x64: None, name: str) -> None:
    _compare(name)


@pytest.mark.parametrize("name", ["exponential", "triangular", "gamma", "poisson", "multinomial"])
def test_eager(name: str) -> None:
    _compare(name, seeds=(5,), transform=lambda f: f)


@pytest.mark.parametrize("name", ["laplace", "gamma", "poisson", "binomial"])
def test_backends(backend: str, name: str) -> None:
    assert backend in BACKENDS
    _compare(name, seeds=(2,), transform=lambda f: mlax.jit(f, backend=backend))


@pytest.mark.parametrize("name", ["logistic", "wald", "gamma", "poisson", "binomial", "multinomial"])
def test_vmap_over_keys(name: str) -> None:
    draw, ulps = CASES[name]
    actual = mlax.vmap(lambda k: draw(mr, k))(mr.split(mr.PRNGKey(4), 3))
    assert_samples(actual, jax.jit(jax.vmap(lambda k: draw(jr, k)))(jr.split(jr.PRNGKey(4), 3)), ulps)


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16", np.float32])
def test_narrow_float_dtypes(dtype: Any) -> None:
    def draw(r: Any, k: Any) -> list[Any]:
        return [r.exponential(k, (4,), dtype), r.logistic(k, (4,), dtype), r.gamma(k, 2.5, (3,), dtype),
                r.rademacher(k, (4,), dtype)]

    expected = jax.jit(lambda k: draw(jr, k))(jr.PRNGKey(9))
    for actual, e in zip(mlax.jit(lambda k: draw(mr, k))(mr.PRNGKey(9)), expected, strict=True):
        assert_samples(actual, e, 2)


@pytest.mark.slow
def test_parameter_broadcasting() -> None:
    """Parameters broadcast to ``shape`` (or, with shape None, to each other), as in jax."""
    col, row = A[:, :1], A[0]

    def draw(r: Any, k: Any) -> list[Any]:
        return [r.pareto(k, row, (2, 3, 4)), r.triangular(k, -col, 0.0, row),
                r.binomial(k, col * 10, row / 6), r.poisson(k, row, (3, 4)), r.gamma(k, col, (2, 3, 4)),
                r.geometric(k, 0.25, (2, 2)),
                r.weibull_min(k, col, row, (3, 4)), r.double_sided_maxwell(k, row, 2.0),
                r.multinomial(k, np.array([10.0, 20.0]), np.array([[0.5, 0.25, 0.25]], np.float32),
                              shape=(2, 3))]

    expected = jax.jit(lambda k: draw(jr, k))(jr.PRNGKey(6))
    for actual, e in zip(mlax.jit(lambda k: draw(mr, k))(mr.PRNGKey(6)), expected, strict=True):
        assert_samples(actual, e, 16)


def test_integer_dtypes() -> None:
    def draw(r: Any, k: Any) -> list[Any]:
        return [r.poisson(k, LAM[:6], dtype=np.int8), r.geometric(k, 0.3, (4,), np.int16),
                r.rademacher(k, (4,), np.int8), r.poisson(k, 4.0, (3,), np.uint32)]

    expected = jax.jit(lambda k: draw(jr, k))(jr.PRNGKey(8))
    for actual, e in zip(mlax.jit(lambda k: draw(mr, k))(mr.PRNGKey(8)), expected, strict=True):
        assert_samples(actual, e, 0)


@pytest.mark.parametrize("name", ["gamma", "beta"])
def test_grad_of_gamma_family(name: str) -> None:
    """Reparameterized gradients (jax's random_gamma_grad) through the custom_jvp."""
    a = RNG.uniform(0.2, 4.0, (5,)).astype(np.float32)
    loss = {"gamma": lambda r, k, a: (r.gamma(k, a) * np.arange(1, 6)).sum(),
            "beta": lambda r, k, a: (r.beta(k, a, a[::-1]) ** 2).sum()}[name]
    expected = jax.jit(jax.grad(lambda a, k: loss(jr, k, a)))(a, jr.PRNGKey(1))
    actual = mlax.jit(mlax.grad(lambda a, k: loss(mr, k, a)))(a, mr.PRNGKey(1))
    assert_samples(actual, expected, 64)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["loggamma", "dirichlet", "chisquare"])
def test_grad_of_gamma_family_slow(name: str) -> None:
    a = RNG.uniform(0.2, 4.0, (5,)).astype(np.float32)
    loss = {"loggamma": lambda r, k, a: r.loggamma(k, a).sum(),
            "dirichlet": lambda r, k, a: (r.dirichlet(k, a) * np.arange(5)).sum(),
            "chisquare": lambda r, k, a: r.chisquare(k, a).sum()}[name]
    expected = jax.jit(jax.grad(lambda a, k: loss(jr, k, a)))(a, jr.PRNGKey(1))
    assert_samples(mlax.jit(mlax.grad(lambda a, k: loss(mr, k, a)))(a, mr.PRNGKey(1)), expected, 64)


def test_grad_against_finite_differences(x64: None) -> None:
    """The implicit reparameterization gradient holds the CDF fixed: d x / d a = -(dF/da) / (dF/dx)
    for F(a, x) = P(a, x), the regularized incomplete gamma function (scipy's gammainc, with
    dF/da by central differences and dF/dx the density)."""
    import scipy.special as sp

    a, key, h = np.array([0.4, 1.5, 6.0, 30.0]), mr.PRNGKey(2), 1e-6
    x = np.asarray(mlax.jit(lambda a: mr.gamma(key, a))(a))
    grad = np.asarray(mlax.jit(mlax.grad(lambda a: mr.gamma(key, a).sum()))(a))
    df_da = (sp.gammainc(a + h, x) - sp.gammainc(a - h, x)) / (2 * h)
    df_dx = np.exp((a - 1) * np.log(x) - x - sp.gammaln(a))
    np.testing.assert_allclose(grad, -df_da / df_dx, rtol=1e-6)


@pytest.mark.slow
def test_zero_size_and_scalar_shapes() -> None:
    draw = lambda r, k: [r.gamma(k, 2.0), r.gamma(k, np.ones((0, 3), np.float32)), r.poisson(k, 3.0, (0,)),  # noqa: E731
                         r.exponential(k, (2, 0)), r.binomial(k, 5.0, 0.5)]
    expected = jax.jit(lambda k: draw(jr, k))(jr.PRNGKey(0))
    for actual, e in zip(mlax.jit(lambda k: draw(mr, k))(mr.PRNGKey(0)), expected, strict=True):
        assert_samples(actual, e, 4)


@pytest.mark.slow
def test_typed_keys() -> None:
    """Typed keys (mlax.random.key, and jax's own) draw what their data draws, eagerly, under jit
    (through gamma's custom_jvp) and under vmap."""
    assert_samples(mr.exponential(jr.key(3), (4,)), jr.exponential(jr.key(3), (4,)), 4)

    def draw(r: Any, k: Any) -> list[Any]:
        return [r.gamma(k, A[0]), r.poisson(k, LAM[:4]), r.binomial(k, 30.0, 0.4, (2,)), r.t(k, 3.0)]

    expected = jax.jit(lambda k: draw(jr, k))(jr.key(3))
    for actual, e in zip(mlax.jit(lambda k: draw(mr, k))(mr.key(3)), expected, strict=True):
        assert_samples(actual, e, 16)
    keys = mr.split(mr.key(5), 2)
    assert_samples(mlax.vmap(lambda k: mr.gamma(k, 1.5))(keys), jax.vmap(lambda k: jr.gamma(k, 1.5))(
        jr.split(jr.key(5), 2)), 16)


ERRORS = [  # (error, match, call(random module, key)); jax raises the same type (NotImplementedError aside)
    (ValueError, "dtype argument to `exponential` must be a float dtype",
     lambda r, k: r.exponential(k, (2,), np.int32)),
    (ValueError, "dtype argument to `gamma` must be a float",
     lambda r, k: r.loggamma(k, 1.0, dtype=np.int32)),
    (ValueError, "dtype argument to `geometric` must be an int dtype",
     lambda r, k: r.geometric(k, 0.5, (2,), np.float32)),
    (ValueError, "dtype argument to `lognormal` must be a float or complex",
     lambda r, k: r.lognormal(k, dtype=int)),
    (ValueError, "pareto parameter shapes must be broadcast-compatible",
     lambda r, k: r.pareto(k, np.ones(3), (2, 1))),
    (ValueError, "Incompatible shapes for broadcasting", lambda r, k: r.pareto(k, np.ones(3), (2,))),
    (ValueError, "must equal the shape argument", lambda r, k: r.gamma(k, np.ones((2, 3)), (3,))),
    (ValueError, "Incompatible shapes for broadcasting", lambda r, k: r.beta(k, np.ones(2), np.ones(3))),
    (TypeError, "Shapes must be 1D sequences", lambda r, k: r.cauchy(k, (2.5,))),
    (ValueError, "accepts a single key", lambda r, k: r.gamma(r.split(k), 1.0)),
    (ValueError, "dirichlet requires alpha.ndim >= 1", lambda r, k: r.dirichlet(k, 1.0)),
    (TypeError, "requires ndarray or scalar arguments", lambda r, k: r.binomial(k, [3.0], 0.5)),
    (ValueError, "method must be one of",
     lambda r, k: r.multivariate_normal(k, np.zeros(2), np.eye(2), method="lu")),
    (ValueError, "requires cov.shape", lambda r, k: r.multivariate_normal(k, np.zeros(2), np.eye(3))),
    (TypeError, "must be a concrete integer", lambda r, k: r.orthogonal(k, 3.5)),
]


@pytest.mark.parametrize(("error", "match", "call"), ERRORS, ids=[e[1][:30] for e in ERRORS])
def test_errors(error: type[Exception], match: str, call: Callable[[Any, Any], Any]) -> None:
    with pytest.raises(error, match=match):
        call(mr, mr.PRNGKey(0))
    if error is not NotImplementedError:
        with pytest.raises(error):
            call(jr, jr.PRNGKey(0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_multivariate_normal(backend: str, rng: np.random.Generator) -> None:
    """The Cholesky method, batched means and covariances, an explicit shape, f32 and an integer
    mean: jax's samples for the same key (to an ulp of the Cholesky factor), on every backend;
    grad of a sample statistic in the mean and covariance; vmap over keys."""
    a = rng.normal(size=(2, 3, 3)).astype(np.float32)
    cov = a @ a.transpose(0, 2, 1) + np.eye(3, dtype=np.float32)
    mean = rng.normal(size=(3,)).astype(np.float32)
    cases = [(mean, cov, None), (mean, cov[0], (4,)), (np.arange(3), cov, (5, 2))]
    for m, c, shape in cases:
        ours = mlax.jit(lambda k, m, c, s=shape: mr.multivariate_normal(k, m, c, s), backend=backend)(
            mr.key(7), m, c)
        theirs = jr.multivariate_normal(jr.key(7), m, c, shape)
        assert (ours.shape, ours.dtype) == (theirs.shape, theirs.dtype)
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-5)

    def stat(r: Any, key: Any) -> Callable[[Any, Any], Any]:
        return lambda m, c: (r.multivariate_normal(key, m, c @ c.T + np.eye(3), (6,)) ** 2).sum()

    expected = jax.grad(stat(jr, jr.key(3)), argnums=(0, 1))(mean, cov[0])
    for got, want in zip(mlax.grad(stat(mr, mr.key(3)), argnums=(0, 1))(mean, cov[0]), expected, strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)
    keys = mr.split(mr.key(1), 3)
    batched = mlax.vmap(lambda k: mr.multivariate_normal(k, mean, cov[1]))(keys)
    np.testing.assert_allclose(np.asarray(batched), np.asarray(jax.vmap(
        lambda k: jr.multivariate_normal(k, mean, cov[1]))(jr.split(jr.key(1), 3))), rtol=1e-5, atol=1e-5)


def test_unsafe_cast_is_a_type_promotion_error(x64: None) -> None:
    for module in (mr, jr):
        with pytest.raises(jax.dtypes.TypePromotionError, match="cannot safely cast"):
            module.pareto(module.PRNGKey(0), np.ones(3), dtype=np.float32)


def test_every_jax_distribution_is_exported() -> None:
    names = ["beta", "cauchy", "dirichlet", "exponential", "gamma", "loggamma", "poisson", "laplace",
             "logistic", "pareto", "t", "chisquare", "f", "rademacher", "maxwell", "double_sided_maxwell",
             "weibull_min", "generalized_normal", "ball", "rayleigh", "wald", "geometric", "triangular",
             "lognormal", "binomial", "multinomial", "orthogonal", "multivariate_normal"]
    for name in names:
        assert name in mr.__all__ and callable(getattr(mr, name)) and hasattr(jr, name)


@pytest.mark.parametrize("first", ["mlax.random", "mlax.random_distributions", "mlax.random_rejection"])
def test_import_orders(first: str) -> None:
    """mlax.random imports the distributions at its end; either may be imported first."""
    code = f"import {first}; import mlax.random as r; print(r.gamma.__module__, r.beta.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["mlax.random_rejection", "mlax.random_distributions"]
