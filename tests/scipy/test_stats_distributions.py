"""mlax.scipy.stats' distributions against jax.scipy.stats, float32 and float64: random arguments
(in and out of the support, invalid parameters among them), every function of every distribution
eagerly in both dtypes; in float32 under one jit all but pdf/pmf (exp of logpdf/logpmf) and the
iterating ones (incomplete gamma/beta: cdf/sf of beta, chi2, gamma, gennorm, poisson; under jit
in test_special_functions.py); float64 is the same program but for the dtype (compiles dominate
the test's time: its jit, of the first function of each distribution, is a long form, -m slow).
grad and vmap on a few, in one jit; the registered submodules.

x = +-inf is left out: there XLA's simplifications give values the formulas do not (jax's
gumbel_l.logpdf(inf) = inf, cauchy.logcdf(-inf) = -18.9 in float32). Tolerances are in ulp of
max(|expected|, floor): the densities are a few operations on lgamma/log terms whose absolute
error is a few ulp of their (large) size, hence floor 1; the CDFs through the incomplete
functions carry those functions' differences (see test_special_functions.py)."""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Callable
from typing import Any

import jax
import jax.scipy.stats as jst
import numpy as np
import pytest

import mlax
import mlax.scipy.stats as mst
from tests.scipy.helpers import assert_close, ulp_error

N = 60


def _real(rng: np.random.Generator, n: int = N) -> np.ndarray:
    return np.concatenate([rng.normal(0, 3, n - 4), [0.0, 30.0, -30.0, np.nan]])


def _pos(rng: np.random.Generator, low: float = -1, high: float = 1.2, n: int = N) -> np.ndarray:
    return 10 ** rng.uniform(low, high, n)


def _unit(rng: np.random.Generator, n: int = N) -> np.ndarray:
    return np.concatenate([rng.uniform(0, 1, n - 4), [0.0, 1.0, -0.5, 1.5]])


def _counts(rng: np.random.Generator, high: int = 12, n: int = N) -> np.ndarray:
    return np.concatenate([rng.integers(0, high, n - 2), [-1, 2.5]]).astype(np.float64)


def _x_loc_scale(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    return _real(rng), rng.normal(size=N), np.concatenate([_pos(rng, n=N - 1), [-1.0]])


def _x_shape(low: float, high: float) -> Callable[[np.random.Generator], tuple[np.ndarray, ...]]:
    """x (positive, some out of the support) and a positive shape parameter."""
    return lambda rng: (np.concatenate([_pos(rng, -1, 1.3, N - 2), [0.0, -1.0]]), _pos(rng, low, high))


ARGS: dict[str, Callable[[np.random.Generator], tuple[np.ndarray, ...]]] = {
    "bernoulli": lambda rng: (_counts(rng, 2), _unit(rng)),
    "beta": lambda rng: (_unit(rng), _pos(rng, -0.5, 1), _pos(rng, -0.5, 1)),
    "betabinom": lambda rng: (_counts(rng), np.full(N, 10.0), _pos(rng, -0.5, 1), _pos(rng, -0.5, 1)),
    "binom": lambda rng: (_counts(rng), np.full(N, 10.0), _unit(rng)),
    "cauchy": _x_loc_scale,
    "chi2": _x_shape(-0.5, 1.3),
    "expon": _x_loc_scale,
    "gamma": _x_shape(-0.5, 1.3),
    "gennorm": lambda rng: (_real(rng), _pos(rng, -0.3, 0.6)),
    "geom": lambda rng: (_counts(rng), _unit(rng)),
    "gumbel_l": _x_loc_scale,
    "gumbel_r": _x_loc_scale,
    "laplace": _x_loc_scale,
    "logistic": _x_loc_scale,
    "nbinom": lambda rng: (_counts(rng), _pos(rng, -0.5, 1), _unit(rng)),
    "norm": _x_loc_scale,
    "pareto": lambda rng: (_pos(rng, -0.5, 1.5), _pos(rng, -0.5, 0.7)),
    "poisson": lambda rng: (_counts(rng), _pos(rng, -1, 1.2)),
    "t": lambda rng: (_real(rng), _pos(rng, -0.5, 1.5), rng.normal(size=N), _pos(rng)),
    "truncnorm": lambda rng: (_real(rng), rng.uniform(-3, 0.5, N), rng.uniform(0.6, 4, N)),
    "uniform": _x_loc_scale,
    "vonmises": lambda rng: (rng.uniform(-4, 4, N), np.concatenate([_pos(rng, n=N - 1), [-1.0]])),
    "wrapcauchy": lambda rng: (rng.uniform(-1, 7, N), _unit(rng)),
}
QUANTILE_FUNCTIONS = {"ppf", "isf"}
ITERATING = {"beta": {"cdf", "sf", "logcdf", "logsf"}, "chi2": {"cdf", "sf", "logcdf", "logsf"},
             "gamma": {"cdf", "sf", "logcdf", "logsf"}, "gennorm": {"cdf"}, "poisson": {"cdf"}}
# (ulps, floor) where the default (64, 1.0) does not hold, and why
TOLERANCE = {
    ("beta", "cdf"): (1024, 1e-3), ("beta", "sf"): (1024, 1e-3),  # betainc's prefactor
    ("beta", "logcdf"): (1024, 1.0), ("beta", "logsf"): (1024, 1.0),
    ("chi2", "sf"): (1024, 1e-3), ("gamma", "sf"): (1024, 1e-3),  # igammac near 0
    ("chi2", "logsf"): (1024, 1.0), ("gamma", "logsf"): (1024, 1.0),
    ("poisson", "cdf"): (1024, 1e-3), ("gennorm", "cdf"): (512, 1e-3),
    ("beta", "pdf"): (256, 1.0), ("binom", "logpmf"): (256, 1.0),  # exp/sum of lgamma terms
    ("binom", "pmf"): (256, 1.0), ("gumbel_l", "ppf"): (256, 1.0),  # log of log1p near 0
    ("cauchy", "logcdf"): (256, 1.0), ("cauchy", "logsf"): (256, 1.0),  # 1/2 + atan(z)/pi cancels in the tail
}


def _functions(dist: str) -> list[str]:
    module = getattr(jst, dist)
    return [f for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf", "logpmf", "pmf")
            if hasattr(module, f)]


def _cases(dt: Any) -> dict[tuple[str, str], tuple[np.ndarray, ...]]:
    cases = {}
    for dist, make in ARGS.items():
        for fn in _functions(dist):
            rng = np.random.default_rng(zlib.crc32(f"{dist}.{fn}".encode()))
            args = [a.astype(dt) for a in make(rng)]
            if fn in QUANTILE_FUNCTIONS:
                args[0] = _unit(rng).astype(dt)
            cases[dist, fn] = tuple(args)
    return cases


def _run(lib: Any, cases: dict[tuple[str, str], tuple[Any, ...]]) -> dict[tuple[str, str], Any]:
    return {(d, f): getattr(getattr(lib, d), f)(*args) for (d, f), args in cases.items()}


def _check_distributions(dtype: Any, under_jit: Callable[[tuple[str, str]], bool]) -> None:
    cases = _cases(dtype)
    if dtype == np.float64:  # the iterating functions' float64 loops: eagerly in test_special_functions.py
        cases = {k: v for k, v in cases.items() if k[1] not in ITERATING.get(k[0], ())}
    expected = jax.jit(lambda cases: _run(jst, cases))(cases)
    jitted = {k: v for k, v in cases.items() if under_jit(k)}
    actual = mlax.jit(lambda cases: _run(mst, cases))(jitted) if jitted else {}
    eager = _run(mst, cases)
    bad = {}
    for key in cases:
        ulps, floor = TOLERANCE.get(key, (64, 1.0))
        for mode, results in (("jit", actual), ("eager", eager)):
            if key in results and (err := ulp_error(results[key], expected[key], floor)) > ulps:
                bad[(*key, mode)] = err
    assert not bad, f"beyond tolerance (ulp): {bad}"


def test_distributions(dtype: Any) -> None:
    """Eagerly; in float32 also under jit (see the module's docstring for what)."""
    _check_distributions(dtype, lambda key: dtype == np.float32 and key[1] not in ITERATING.get(key[0], ())
                         and key[1] not in ("pdf", "pmf"))


@pytest.mark.slow
def test_distributions_float64_jit() -> None:
    """Long form: the first function of each distribution under jit in float64."""
    firsts = {(d, _functions(d)[0]) for d in ARGS}
    mlax.config.update("x64", True)
    try:
        _check_distributions(np.float64, lambda key: key in firsts)
    finally:
        mlax.config.update("x64", False)


def test_multivariate_distributions(rng: np.random.Generator) -> None:
    alpha = rng.uniform(0.5, 3, 4).astype(np.float32)
    x = rng.dirichlet(np.ones(4), size=5).T.astype(np.float32)
    for fn in ("logpdf", "pdf"):
        for args in ((x, alpha), (x[:3], alpha)):
            assert_close(getattr(mst.dirichlet, fn)(*args), getattr(jst.dirichlet, fn)(*args), 64, 1.0, fn)
    counts = np.array([2, 3, 5])
    p = np.array([0.2, 0.3, 0.5], np.float32)
    for fn in ("logpmf", "pmf"):
        assert_close(mlax.jit(getattr(mst.multinomial, fn))(counts, 10, p),
                     getattr(jst.multinomial, fn)(counts, 10, p), 64, 1.0, fn)
    mu = np.array([0.0, 0.5, 5.0, 50.0, 500.0], np.float32)
    assert_close(mst.poisson.entropy(mu), jst.poisson.entropy(mu), 64, 1.0, "poisson.entropy")


def _grad_of_last(lib: Any, dist: str, fn: str, x: Any, params: tuple[float, ...]) -> Callable[[Any], Any]:
    """d/dv sum(dist.fn(x, *params[:-1], v)): the derivative in the last parameter."""
    return lambda v: getattr(getattr(lib, dist), fn)(x, *params[:-1], v).sum()


def _grads_and_vmap(api: Any, lib: Any, x: Any) -> Any:
    """One program: the derivatives in the last parameter of a few densities, logistic.cdf's in
    x, and gamma.logpdf under vmap."""
    rows = [("gamma", "logpdf", x, (2.5,)), ("t", "logpdf", x, (4.0,)), ("beta", "logpdf", x / 4, (2.0, 3.0)),
            ("poisson", "logpmf", api.numpy.round(x), (3.0,)), ("vonmises", "logpdf", x, (2.0,))]
    out = {f"{dist}.{fn}": api.grad(_grad_of_last(lib, dist, fn, arg, params))(np.float32(params[-1]))
           for dist, fn, arg, params in rows}
    out["logistic.cdf"] = api.grad(lambda v: lib.logistic.cdf(v).sum())(x)
    xs = x.reshape(2, 4)
    out["vmap gamma.logpdf"] = api.vmap(lib.gamma.logpdf)(xs, xs)
    return out


def test_grad_and_vmap(rng: np.random.Generator) -> None:
    x = rng.uniform(0.2, 3, 8).astype(np.float32)
    actual = mlax.jit(lambda x: _grads_and_vmap(mlax, mst, x))(x)
    expected = jax.jit(lambda x: _grads_and_vmap(jax, jst, x))(x)
    for key, want in expected.items():
        ulps, floor = {"logistic.cdf": (64, 0.0), "vmap gamma.logpdf": (64, 1.0)}.get(key, (256, 1.0))
        assert_close(actual[key], want, ulps, floor, key)


def test_submodules_are_registered() -> None:
    """Each distribution is an attribute of mlax.scipy.stats, importable as a module, and
    redirected by install_as_jax."""
    from mlax.jax_modules import REDIRECTS

    for dist in ARGS:
        module = importlib.import_module(f"mlax.scipy.stats.{dist}")
        assert getattr(mst, dist) is module
        assert REDIRECTS[f"jax.scipy.stats.{dist}"].mlax_module == f"mlax.scipy.stats.{dist}"
        assert set(_functions(dist)) <= set(dir(module))
