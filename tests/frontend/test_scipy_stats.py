"""mlax.scipy.stats.norm and the special functions under it (ndtr, log_ndtr, ndtri; gammaln
and digamma, which mlax.random needs) against jax.scipy on random inputs, tails included,
float32 and float64, eagerly and under jit; log_ndtr's custom gradient against jax's."""

from __future__ import annotations

from typing import Any

import jax
import jax.scipy.special as jss
import jax.scipy.stats as jst
import numpy as np
import pytest

import mlax
import mlax.scipy.special as mss
import mlax.scipy.stats as mst

RNG = np.random.default_rng(0)


def _x(dtype: Any) -> np.ndarray:
    """Normal and wide uniform values, both tails of log_ndtr's segments, the specials."""
    wide = 40.0 if dtype == np.float64 else 15.0
    special = [0.0, -0.0, 5.0, -10.0, 8.0, -20.0, 5.01, -10.01, np.inf, -np.inf, np.nan]
    return np.concatenate([RNG.normal(0, 3, 300), RNG.uniform(-wide, wide, 300), special]).astype(dtype)


def _p(dtype: Any) -> np.ndarray:
    tiny = -300 if dtype == np.float64 else -37
    near_one = 1 - 10.0 ** RNG.uniform(-7, 0, 50)
    return np.concatenate([RNG.uniform(0, 1, 300), 10.0 ** RNG.uniform(tiny, 0, 200), near_one,
                           [0.0, 1.0, -0.5, 1.5, np.exp(-2.0), np.nan]]).astype(dtype)


def assert_close(actual: Any, expected: Any, ulps: float, floor: float = 0.0) -> None:
    """Same dtype and shape; within ``ulps`` ulp of max(|expected|, floor); same NaN/inf
    pattern. XLA's CPU kernels flush subnormal results to zero, so expected zeros may be
    subnormals here."""
    a, e = np.asarray(actual), np.asarray(expected)
    assert (a.shape, a.dtype) == (e.shape, e.dtype)
    info = np.finfo(a.dtype)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(e))
    inf = np.isinf(e)
    np.testing.assert_array_equal(a[inf], e[inf])
    finite = np.isfinite(e)
    err = np.abs(a[finite] - e[finite])
    bound = ulps * info.eps * np.maximum(np.abs(e[finite]), floor) + (e[finite] == 0) * info.tiny
    assert np.all(err <= bound), f"max error {np.max(err / np.maximum(bound, info.tiny))} of the bound"


@pytest.fixture(params=["float32", "float64"])
def dtype(request: pytest.FixtureRequest) -> Any:
    """The dtype of the inputs; float64 with x64 on (mlax's switch is jax's own)."""
    if request.param == "float64":
        mlax.config.update("x64", True)
        yield np.float64
        mlax.config.update("x64", False)
    else:
        yield np.float32


# (name, inputs, ulps, floor): the erfc-based tails carry erfc's differences from XLA's (float32
# XLA is ~32 ulp from the truth there, mlax's float64 erfc ~250 ulp far in the tail); log_ndtr
# near 0 from above is log(1 - q): its absolute error is what ndtr's is, hence the floor
SPECIAL = [("ndtr", _x, 512, 0.0), ("log_ndtr", _x, 512, 1.0), ("ndtri", _p, 8, 0.0),
           ("gammaln", _x, 32, 1.0), ("digamma", _x, 32, 1.0)]


@pytest.mark.parametrize(("name", "inputs", "ulps", "floor"), SPECIAL, ids=[s[0] for s in SPECIAL])
def test_special_functions(dtype: Any, name: str, inputs: Any, ulps: float, floor: float) -> None:
    x = inputs(dtype)
    expected = jax.jit(getattr(jss, name))(x)
    fn = getattr(mss, name)
    assert_close(fn(x), expected, ulps, floor)
    assert_close(mlax.jit(fn)(x), expected, ulps, floor)


@pytest.mark.parametrize("order", [0, 3, 10])
def test_log_ndtr_tails_are_accurate(dtype: Any, order: int) -> None:
    """Far in the lower tail log_ndtr is the asymptotic series: jax's within a few ulp."""
    x = -np.linspace(10.5 if dtype == np.float32 else 20.5, 1e3, 500).astype(dtype)
    expected = jax.jit(lambda x: jss.log_ndtr(x, series_order=order))(x)
    assert_close(mlax.jit(lambda x: mss.log_ndtr(x, series_order=order))(x), expected, 8)


def test_log_ndtr_grad() -> None:
    x = _x(np.float32)[:-3]
    expected = jax.grad(lambda x: jss.log_ndtr(x).sum())(x)
    assert_close(mlax.grad(lambda x: mss.log_ndtr(x).sum())(x), expected, 512, 1.0)


NORM = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


@pytest.mark.parametrize("name", NORM)
def test_norm_densities_and_cdfs(dtype: Any, name: str) -> None:
    x = _x(dtype)
    loc = RNG.normal(size=x.shape).astype(dtype)
    scale = RNG.uniform(0.5, 3, size=x.shape).astype(dtype)
    expected = [jax.jit(getattr(jst.norm, name))(x), jax.jit(getattr(jst.norm, name))(x, loc, scale)]
    fn = getattr(mst.norm, name)
    assert_close(fn(x), expected[0], 512, 1.0)
    assert_close(mlax.jit(fn)(x, loc, scale), expected[1], 512, 1.0)


@pytest.mark.parametrize("name", ["ppf", "isf"])
def test_norm_quantiles(dtype: Any, name: str) -> None:
    q = _p(dtype)
    expected = [jax.jit(getattr(jst.norm, name))(q), jax.jit(getattr(jst.norm, name))(q, 1.5, 2.0)]
    fn = getattr(mst.norm, name)
    assert_close(fn(q), expected[0], 8, 1.0)
    assert_close(mlax.jit(fn)(q, 1.5, 2.0), expected[1], 8, 1.0)


def test_norm_promotion_and_scalars() -> None:
    """Integers promote to the default float, Python scalars stay weak, as in jax."""
    for name in NORM:
        actual, expected = getattr(mst.norm, name)(np.arange(3)), getattr(jst.norm, name)(np.arange(3))
        assert actual.dtype == expected.dtype
        actual = getattr(mst.norm, name)(1.0)
        assert (actual.dtype, actual.weak_type) == (expected.dtype, getattr(jst.norm, name)(1.0).weak_type)
    assert mst.norm.ppf(0.3).dtype == jst.norm.ppf(0.3).dtype


def test_grad_and_vmap_of_norm() -> None:
    x = RNG.normal(size=(4, 3)).astype(np.float32)
    for name in NORM:
        f, g = getattr(mst.norm, name), getattr(jst.norm, name)
        actual = mlax.grad(lambda x, f=f: f(x, 0.5, 2.0).sum())(x)
        assert_close(actual, jax.grad(lambda x, g=g: g(x, 0.5, 2.0).sum())(x), 64, 1.0)
        assert_close(mlax.vmap(f)(x), jax.vmap(g)(x), 64, 1.0)


@pytest.mark.parametrize("call", [lambda m: m.ndtr(np.arange(3)), lambda m: m.ndtri(np.float16(0.5)),
                                  lambda m: m.log_ndtr(np.arange(3))])
def test_unsupported_dtypes(call: Any) -> None:
    for module in (mss, jss):
        with pytest.raises(TypeError, match="is not supported"):
            call(module)


@pytest.mark.parametrize(("order", "error"), [(1.5, TypeError), (-1, ValueError), (31, ValueError)])
def test_log_ndtr_series_order(order: Any, error: type[Exception]) -> None:
    for module in (mss, jss):
        with pytest.raises(error, match="series_order"):
            module.log_ndtr(np.float32(-12.0), series_order=order)


def test_importable_as_jax_is() -> None:
    import mlax.scipy

    assert mlax.scipy.stats.norm is mst.norm
    assert set(mst.__dict__) >= {"norm"}
