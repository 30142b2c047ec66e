"""mlax.numpy statistics, binning and finite differences against jax.numpy: quantile & co. (every
method, axis forms, keepdims, NaN handling, weights), cov/corrcoef, bincount, digitize, the
histograms, interp, diff, ediff1d, gradient, trapezoid and unwrap; eager and under mlax.jit,
grad against jax.grad, vmap against jax.vmap, and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.numpy.helpers import check_abstract, check_both, check_values, operand
from tests.oracle import assert_same

BF16 = np.dtype(ml_dtypes.bfloat16)
METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")
AXES = (None, 0, -1, (0, 2), (2, 1), ())
F16_RTOL = 4e-3


def _axis_and_keepdims(rng: np.random.Generator) -> tuple[Any, bool]:
    return AXES[int(rng.integers(len(AXES)))], bool(rng.integers(2))


@pytest.mark.parametrize("name, dtype", [
    ("quantile", np.float32), ("nanquantile", np.float32), ("percentile", np.float32),
    ("nanpercentile", np.float32), ("quantile", np.int8), ("nanpercentile", np.int8),
    ("quantile", np.float16), ("nanquantile", np.float16)])
def test_quantiles_every_method(name: str, dtype: Any, rng: np.random.Generator) -> None:
    """All six methods at once (one compile), a random axis form and keepdims, scalar and
    vector ``q`` (floats carry NaNs and infinities)."""
    a = operand(rng, dtype, (3, 4, 5))
    scale = 100 if "percentile" in name else 1
    axis, keepdims = _axis_and_keepdims(rng)
    q_vec = (rng.uniform(0, 1, 3) * scale).astype(np.float32)
    q_scalar = float(rng.uniform(0, 1) * scale)

    def spell(m: Any) -> Callable[..., Any]:
        fn = getattr(m, name)
        return lambda a, q: (*(fn(a, q, axis=axis, method=method, keepdims=keepdims) for method in METHODS),
                             fn(a, q_scalar, axis=axis, keepdims=keepdims))

    check_both(spell, a, q_vec, rtol=F16_RTOL if dtype == np.float16 else 2e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_medians(name: str, rng: np.random.Generator) -> None:
    x = operand(rng, np.float32, (4, 3, 2))
    i = operand(rng, np.int16, (4, 3, 2))
    def spell(m: Any) -> Callable[..., Any]:
        fn = getattr(m, name)
        return lambda x, i: tuple(fn(v, axis=axis, keepdims=kd) for v in (x, i)
                                  for axis, kd in ((None, False), (0, True), ((0, 2), False), (-1, True)))

    check_both(spell, x, i)
    check_both(lambda m: getattr(m, name), 2.5)


def test_quantile_dtype_of_q_and_weights(rng: np.random.Generator) -> None:
    """Positions are computed in the dtype of ``q`` (float16 rounds); inverted_cdf weights (one
    negative makes its slice NaN) along the full array or the reduced axes."""
    a = operand(rng, np.float32, (3, 6), specials=False)
    w = rng.uniform(0, 2, size=(3, 6)).astype(np.float32)
    w[1, 2] = -1.0
    q16 = np.array([0.3, 0.71], np.float16)
    check_both(lambda m: lambda a, q: (m.quantile(a, q), m.quantile(a.astype(np.float16), q, axis=1)), a, q16,
               rtol=F16_RTOL)
    check_both(lambda m: lambda a, w: (m.quantile(a, 0.4, axis=1, method="inverted_cdf", weights=w),
                                       m.nanquantile(a, np.float32(0.6), axis=0, method="inverted_cdf",
                                                     weights=w[:, 0]),
                                       m.percentile(a, 35.0, axis=1, method="inverted_cdf", weights=w[0])),
               a, w)


def test_quantile_errors(rng: np.random.Generator) -> None:
    a = operand(rng, np.float32, (3, 4))
    for call, err in [
        (lambda m: m.quantile(a, 0.5, method="bogus"), ValueError),
        (lambda m: m.quantile(a, 0.5, weights=np.ones((3, 4))), NotImplementedError),
        (lambda m: m.quantile(a, np.ones((2, 2)) / 2), ValueError),
        (lambda m: m.quantile(a, 1), TypeError),
        (lambda m: m.quantile(a, 0.5, out=a), ValueError),
        (lambda m: m.median(np.zeros((2, 0)), axis=1), TypeError),
        (lambda m: m.quantile(a, 0.5, axis=0, method="inverted_cdf", weights=np.ones(3)[:2]), ValueError),
        (lambda m: m.quantile(a, 0.5, method="inverted_cdf", weights=np.ones(4)), ValueError),
        (lambda m: m.median(a, axis=(0, 0)), ValueError),
    ]:
        with pytest.raises(err):
            call(jnp)
        with pytest.raises(err):
            call(mnp)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float16], ids=["f32", "i8", "f16"])
def test_cov_corrcoef(dtype: Any, rng: np.random.Generator) -> None:
    m = operand(rng, dtype, (3, 6), specials=False)
    y = operand(rng, dtype, (6,), specials=False)
    fw = rng.integers(1, 4, 6).astype(np.int32)
    aw = rng.uniform(0.5, 2, 6).astype(np.float32)

    def spell(lib: Any) -> Callable[..., Any]:
        return lambda m, y, fw, aw: (
            lib.cov(m), lib.cov(m, rowvar=False), lib.cov(m, bias=True), lib.cov(m, ddof=2), lib.cov(m, y),
            lib.cov(y), lib.cov(m, fweights=fw), lib.cov(m, aweights=aw),
            lib.cov(m, fweights=fw, aweights=aw),
            lib.cov(m, fweights=fw, aweights=aw, ddof=0), lib.cov(m, dtype=np.float32),
            lib.corrcoef(m), lib.corrcoef(m, y), lib.corrcoef(y), lib.corrcoef(m, rowvar=False))

    check_both(spell, m, y, fw, aw, rtol=F16_RTOL if dtype == np.float16 else 1e-5, atol=1e-6)


def test_cov_edges_and_errors() -> None:
    for m in (np.zeros((0, 3), np.float16), np.zeros((2, 0), np.float32), np.zeros((1, 0)), 2.0):
        check_values(mnp.cov, jnp.cov, m)
    for call, err in [
        (lambda lib: lib.cov(np.ones((2, 2, 2))), ValueError),
        (lambda lib: lib.cov(np.ones((2, 3)), dtype=np.int32), ValueError),
        (lambda lib: lib.cov(np.ones((2, 3)), fweights=np.ones(3)), TypeError),
        (lambda lib: lib.cov(np.ones((2, 3)), aweights=np.ones(2)), RuntimeError),
        (lambda lib: lib.cov(np.ones((2, 3)), fweights=np.ones((3, 1), np.int32)), RuntimeError),
        (lambda lib: lib.cov(np.ones(6), np.ones((6, 3)), rowvar=False), ValueError),
    ]:
        with pytest.raises(err):
            call(jnp)
        with pytest.raises(err):
            call(mnp)


def test_bincount_digitize(rng: np.random.Generator) -> None:
    x = rng.integers(-2, 9, size=20).astype(np.int32)
    w = rng.normal(size=20).astype(np.float32)
    bins = np.sort(rng.normal(size=5)).astype(np.float32)
    v = operand(rng, np.float32, (4, 5))
    check_both(lambda m: lambda x, w: (m.bincount(x, length=12), m.bincount(x, w, length=5),
                                       m.bincount(x > 3, length=3),
                                       m.bincount(x.astype(np.int8), w, length=9)),
               x, w)
    for kw in ({}, {"minlength": 15}):  # the length from the concrete values: eager only
        assert_same(mnp.bincount(x, **kw), jnp.bincount(x, **kw))
    check_both(lambda m: lambda v, b: (m.digitize(v, b), m.digitize(v, b, right=True), m.digitize(v, b[::-1]),
                                       m.digitize(v, b[::-1], True), m.digitize(v, b[:0]),
                                       m.digitize(v.astype(np.int8), b)), np.nan_to_num(v), bins)
    for bad, err in [(x.astype(np.float32), TypeError), (x.reshape(4, 5), ValueError)]:
        with pytest.raises(err):
            mnp.bincount(bad, length=3)
    with pytest.raises(ValueError):
        mnp.digitize(v, v)
    with pytest.raises(mlax.ConcretizationTypeError):
        mlax.jit(mnp.bincount)(x)


def test_histograms(rng: np.random.Generator) -> None:
    """float32 samples (float16 ones are left out: mlax.numpy.linspace differs from jnp's there)
    and integer ones, which bin in float32."""
    a = operand(rng, np.float32, (30,), specials=False) * 2
    s = operand(rng, np.int16, (25, 3), specials=False)
    w = rng.uniform(0, 2, size=30).astype(np.float32)
    edges = np.array([-2, -0.5, 0, 0.5, 2], np.float32)

    def spell(m: Any) -> Callable[..., Any]:
        return lambda a, s, w: (
            m.histogram(a), m.histogram(a, 7, range=(-1, 1.5), density=True),
            m.histogram(a, edges, weights=w),
            m.histogram_bin_edges(a, 4), m.histogram_bin_edges(a[:3] * 0 + 1, 3),
            m.histogramdd(s, bins=4), m.histogramdd(s, bins=[3, edges, 2], range=[None, None, (0, 1)],
                                                    density=True, weights=w[:25]),
            m.histogram2d(s[:, 0], s[:, 1], bins=3, weights=w[:25]), m.histogram2d(s[:, 0], s[:, 2], edges),
            m.histogram2d(s[:, 0], s[:, 1], bins=(2, 5), density=True), m.histogram(s[:, 0], 4))

    check_both(spell, a, s, w)


def test_histogram_errors() -> None:
    a = np.ones(4, np.float32)
    for call, err in [
        (lambda m: m.histogram_bin_edges(a, "auto"), NotImplementedError),
        (lambda m: m.histogram(a, "auto"), TypeError),
        (lambda m: m.histogram(a, weights=np.ones(3)), ValueError),
        (lambda m: m.histogram(a, 3, range=(0, 1, 2)), ValueError),
        (lambda m: m.histogramdd(np.ones((4, 2)), bins=[2, 2, 2]), ValueError),
        (lambda m: m.histogramdd(np.ones((4, 2)), range=[(0, 1)]), ValueError),
        (lambda m: m.histogramdd(np.ones((4, 2)), weights=np.ones(3)), ValueError),
    ]:
        for lib in (jnp, mnp):
            with pytest.raises(err):
                call(lib)


def test_interp(rng: np.random.Generator) -> None:
    xp = np.sort(rng.normal(size=8)).astype(np.float32)
    fp = operand(rng, np.float32, (8,), specials=False)
    x = operand(rng, np.float32, (3, 7)) * 2

    def spell(m: Any) -> Callable[..., Any]:
        return lambda x, xp, fp: (
            m.interp(x, xp, fp), m.interp(x, xp, fp, left=-5.0, right=np.float32(7)),
            m.interp(x, xp, fp, left="extrapolate", right="extrapolate"), m.interp(x, xp, fp, period=2.0),
            m.interp(x, xp.astype(np.int8), fp.astype(np.float16), right=3),
            m.interp(x, xp, fp, period=np.float32(1.5)),
            m.interp(x.astype(np.float16), xp, fp.astype(np.int8)),
            m.interp(xp.astype(np.int8), xp, fp.astype(np.float16), left=2))

    check_both(spell, x, xp, fp, rtol=F16_RTOL, atol=1e-6)
    for bad in ({"left": "nope"}, {"period": np.ones(2)}):
        with pytest.raises(ValueError):
            mnp.interp(x, xp, fp, **bad)
    with pytest.raises(ValueError):
        mnp.interp(x, xp, fp[:3])


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_, BF16], ids=["f32", "i8", "bool", "bf16"])
def test_diff_ediff1d(dtype: Any, rng: np.random.Generator) -> None:
    a = operand(rng, dtype, (4, 5))

    def spell(m: Any) -> Callable[..., Any]:
        return lambda a: (m.diff(a), m.diff(a, n=2), m.diff(a, axis=0), m.diff(a, 3, 0, prepend=1),
                          m.diff(a, append=np.ones((4, 2), np.float16)), m.diff(a, n=0), m.diff(a, 9),
                          m.ediff1d(a), m.ediff1d(a, to_begin=np.array([1.5, 2]), to_end=-3))

    check_both(spell, a)
    with pytest.raises(ValueError):
        mnp.diff(a, -1)
    with pytest.raises(ValueError):
        mnp.diff(np.float32(2))


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float16], ids=["f32", "i8", "f16"])
def test_gradient_trapezoid(dtype: Any, rng: np.random.Generator) -> None:
    a = operand(rng, dtype, (4, 5), specials=False)
    coords = np.cumsum(rng.uniform(0.2, 1, 5)).astype(np.float32)
    x2 = np.cumsum(rng.uniform(0.2, 1, (4, 5)), 0).astype(np.float32)

    def spell(m: Any) -> Callable[..., Any]:
        return lambda a, c, x2: (
            m.gradient(a), m.gradient(a, 2.0), m.gradient(a, 0.5, np.float32(2)), m.gradient(a, axis=1),
            m.gradient(a, c, axis=-1), m.gradient(a, axis=()),
            m.trapezoid(a), m.trapezoid(a, dx=0.5), m.trapezoid(a, axis=0), m.trapezoid(a, c),
            m.trapezoid(a, x2, axis=0), m.trapezoid(a, dx=np.float16(2)),
            m.trapezoid(a, dx=c[None, :4]))

    check_both(spell, a, coords, x2, rtol=F16_RTOL if dtype == np.float16 else 1e-5, atol=1e-5)
    for call, err in [(lambda m: m.gradient(a[:1], axis=0), ValueError),
                      (lambda m: m.gradient(a, 1.0, 2.0, 3.0), TypeError),
                      (lambda m: m.gradient(a, coords[:3], axis=1), ValueError),
                      (lambda m: m.gradient(a, edge_order=2), NotImplementedError)]:
        for lib in (jnp, mnp):
            with pytest.raises(err):
                call(lib)


@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=["f32", "i32"])
def test_unwrap(dtype: Any, rng: np.random.Generator) -> None:
    p = (np.cumsum(rng.normal(scale=3, size=(3, 8)), 1) * (3 if dtype == np.int32 else 1)).astype(dtype)
    check_both(lambda m: lambda p: (m.unwrap(p), m.unwrap(p, axis=0), m.unwrap(p, discont=4.0),
                                    m.unwrap(p, period=5), m.unwrap(p[:, :0])), p, rtol=1e-5, atol=1e-5)


def test_grad_against_jax(rng: np.random.Generator) -> None:
    """Gradients through the sorts, gathers, scatter-free interpolation and the covariance."""
    a = rng.normal(size=(4, 5)).astype(np.float32)
    xp = np.sort(rng.normal(size=6)).astype(np.float32)
    fns: list[Callable[[Any, Any], Any]] = [
        lambda m, a: m.median(a, axis=0).sum(),
        lambda m, a: (m.quantile(a, np.array([0.2, 0.9], np.float32), axis=1) ** 2).sum(),
        lambda m, a: m.nanpercentile(a, 40.0, method="nearest"),
        lambda m, a: m.interp(a, xp, np.sin(xp)).sum() + m.interp(0.3, xp[:5], a[0]),
        lambda m, a: m.trapezoid(a ** 2, dx=0.3).sum() + m.trapezoid(a[0], a[1]),
        lambda m, a: (m.cov(a) ** 2).sum() + m.corrcoef(a)[0, 1],
        lambda m, a: (m.gradient(a, axis=1) ** 2).sum() + (m.diff(a, 2) ** 2).sum(),
        lambda m, a: m.unwrap(a * 3).sum() + m.histogram(a, 3, weights=a ** 2)[0][1],
    ]
    for fn in fns:
        expected = jax.jit(jax.grad(lambda a, fn=fn: fn(jnp, a)))(a)
        assert_same(mlax.grad(lambda a, fn=fn: fn(mnp, a))(a), expected, rtol=1e-5, atol=1e-6)


def test_vmap_against_jax(rng: np.random.Generator) -> None:
    a = rng.normal(size=(3, 4, 5)).astype(np.float32)
    xp = np.sort(rng.normal(size=6)).astype(np.float32)
    i = rng.integers(0, 6, size=(3, 7)).astype(np.int32)
    def batched(m: Any, a: Any, i: Any) -> Any:
        return (m.median(a, axis=1), m.quantile(a, np.float32(0.3)), m.interp(a, xp, xp ** 2),
                m.bincount(i, length=6), m.cov(a), m.diff(a, axis=0), m.trapezoid(a))

    expected = jax.jit(jax.vmap(lambda a, i: batched(jnp, a, i)))(a, i)
    assert_same(mlax.vmap(lambda a, i: batched(mnp, a, i))(a, i), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16], ids=["f32", "i32", "f16"])
def test_dtype_rules(dtype: Any, x64: bool, rng: np.random.Generator) -> None:
    """Result dtypes and weak types with x64 off and on (jax.eval_shape: no compiles)."""
    a = operand(rng, dtype, (3, 5))
    xp = np.sort(rng.normal(size=5)).astype(np.float32)
    def spell(m: Any) -> Callable[..., Any]:
        return lambda a, w: (
            m.quantile(a, 0.3), m.median(a, axis=0), m.percentile(a, 50), m.nanpercentile(a, np.float32(5)),
            m.quantile(a, 0.5, method="lower"), m.cov(a), m.corrcoef(a, w[:3]), m.histogram(a, 4, weights=a),
            m.histogram_bin_edges(a), m.interp(a, xp, w), m.interp(2, xp, xp.astype(np.int8)), m.diff(a),
            m.trapezoid(a), m.trapezoid(a, dx=2), m.gradient(a), m.unwrap(a), m.ediff1d(a, to_begin=1.5),
            m.digitize(a, xp), m.histogramdd(m.stack([w, w]), 3),
            m.bincount(a[0].astype(np.int8), w, length=4))

    check_abstract(spell(mnp), spell(jnp), a, rng.normal(size=5).astype(np.float32))
