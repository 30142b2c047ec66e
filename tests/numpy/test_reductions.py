"""mlax.numpy reductions against jax.numpy: result dtypes (int8 sums to int32, ints average
to float32, halves accumulate in float32), axis/keepdims/where/initial/dtype/ddof options,
empty axes, NaN handling, x64 mode, eager and jitted, and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.numpy.helpers import (
    DTYPES,
    check_abstract,
    check_both,
    check_values,
    operand,
)

BF16 = np.dtype(ml_dtypes.bfloat16)
REDUCTIONS = ["sum", "prod", "max", "min", "amax", "amin", "all", "any", "mean", "var", "std", "argmax",
              "argmin", "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "ptp", "count_nonzero", "nanvar",
              "nanstd", "nanargmax", "nanargmin"]
CUMULATIVE = ["cumsum", "cumprod", "nancumsum", "nancumprod"]
# Axis arguments for a rank-3 input; argmax/argmin and the cumulative ops take one axis at most.
AXES = [None, 0, -1, (0, 2), (2, 0, 1), ()]
SINGLE_AXIS = {"argmax", "argmin", "nanargmax", "nanargmin"}
SHAPE = (2, 3, 4)


def _axes_for(name: str) -> list[Any]:
    return [a for a in AXES if not isinstance(a, tuple)] if name in SINGLE_AXIS else AXES


def _call(lib: Any, name: str, axis: Any, keepdims: bool) -> Callable[[Any], Any]:
    fn = getattr(lib, name)
    return lambda a: fn(a, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_dtype_rules(name: str, x64: bool, rng: np.random.Generator) -> None:
    """Every dtype (Python scalars included) with a random axis form and keepdims, x64 off and on."""
    for dtype in DTYPES:
        x = operand(rng, dtype, SHAPE)
        axes = _axes_for(name) if np.ndim(x) else [None]
        axis = axes[int(rng.integers(len(axes)))]
        keepdims = bool(rng.integers(2))
        check_abstract(_call(mnp, name, axis, keepdims), _call(jnp, name, axis, keepdims), x)


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float16], ids=["f32", "i8", "f16"])
def test_reduction_values(name: str, dtype: Any, rng: np.random.Generator) -> None:
    x = operand(rng, dtype, SHAPE)
    if dtype == np.float16:
        x = np.nan_to_num(x, posinf=60.0, neginf=-60.0).astype(dtype)  # f16 sums: no inf - inf
    axis = _axes_for(name)[int(rng.integers(len(_axes_for(name))))]
    keepdims = bool(rng.integers(2))
    check_values(_call(mnp, name, axis, keepdims), _call(jnp, name, axis, keepdims), x)


@pytest.mark.parametrize("name", CUMULATIVE)
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_, BF16, float])
def test_cumulative(name: str, dtype: Any, rng: np.random.Generator) -> None:
    x = operand(rng, dtype, (3, 4))
    if name.endswith("prod") and not isinstance(x, float):
        x = np.clip(x, -3, 3).astype(x.dtype)  # keep products in range
    axis = (None, 0, -1)[int(rng.integers(3))] if np.ndim(x) else None
    check_both(lambda m: lambda a: getattr(m, name)(a, axis), x)


@pytest.mark.parametrize("dtype", [None, np.int8, np.float16, np.bool_, np.float32])
def test_cumulative_dtype_argument(dtype: Any, rng: np.random.Generator) -> None:
    x = rng.integers(-3, 4, size=(2, 5)).astype(np.int32)
    for name in ("cumsum", "cumprod"):
        check_both(lambda m, n=name: lambda a: getattr(m, n)(a, 1, dtype), x)


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.bool_])
def test_array_api_cumulative(name: str, dtype: Any, rng: np.random.Generator) -> None:
    x = np.clip(operand(rng, dtype, (2, 3)), -3, 3).astype(dtype)
    check_both(lambda m: lambda a: (getattr(m, name)(a, axis=1), getattr(m, name)(a[0], include_initial=True),
                                    getattr(m, name)(a, axis=0, dtype=np.float32, include_initial=True)), x)
    with pytest.raises(ValueError, match=f"{name}: axis is only optional"):
        getattr(mnp, name)(x)
    with pytest.raises(ValueError, match=f"{name}: the input must not be a scalar"):
        getattr(mnp, name)(x[0, 0])


def test_empty_and_size_one_axes(rng: np.random.Generator) -> None:
    empty = np.zeros((0, 3), np.float32)
    for name in ("sum", "prod", "mean", "var", "all", "any", "nansum", "count_nonzero"):
        check_values(getattr(mnp, name), getattr(jnp, name), empty)
        check_both(lambda m, n=name: lambda a: getattr(m, n)(a, axis=0), empty)
    for name in ("max", "min", "argmax"):
        check_both(lambda m, n=name: lambda a: getattr(m, n)(a, axis=1), empty)
    one = operand(rng, np.float32, (1, 3, 1))
    for name in ("max", "argmin", "var", "std", "ptp"):
        check_both(lambda m, n=name: lambda a: getattr(m, n)(a, axis=0), one)


def test_where_initial_and_dtype(rng: np.random.Generator) -> None:
    x = operand(rng, np.float32, (3, 4))
    i = operand(rng, np.int8, (3, 4))
    mask = rng.random((3, 4)) < 0.6
    row_mask = rng.random((4,)) < 0.5
    calls = [
        lambda m: lambda a, w: m.sum(a, axis=1, where=w),
        lambda m: lambda a, w: m.prod(a, where=w, keepdims=True),
        lambda m: lambda a, w: m.max(a, axis=0, where=w, initial=-1.0),
        lambda m: lambda a, w: m.min(a, where=w, initial=2),
        lambda m: lambda a, w: m.mean(a, axis=1, where=w),
        lambda m: lambda a, w: m.var(a, axis=0, where=w, ddof=1),
        lambda m: lambda a, w: m.all(a > 0, axis=1, where=w),
        lambda m: lambda a, w: m.any(a > 0, where=w),
        lambda m: lambda a, w: m.nansum(a, axis=0, where=w),
    ]
    for call in calls:
        check_values(call(mnp), call(jnp), x, mask)
        check_values(call(mnp), call(jnp), i, row_mask)
    for kw in ({"initial": 5}, {"dtype": np.int8}, {"dtype": np.float16}, {"dtype": bool},
               {"promote_integers": False}, {"initial": 1.5, "dtype": np.float32}):
        check_values(lambda a, kw=kw: mnp.sum(a, 0, **kw), lambda a, kw=kw: jnp.sum(a, 0, **kw), i)
        check_values(lambda a, kw=kw: mnp.prod(a, **kw), lambda a, kw=kw: jnp.prod(a, **kw), i % 3)
    check_values(lambda a: mnp.amax(a, initial=100), lambda a: jnp.amax(a, initial=100), i)
    check_values(lambda a: mnp.mean(a, dtype=np.float16), lambda a: jnp.mean(a, dtype=np.float16), i)


def test_var_std_options(rng: np.random.Generator) -> None:
    x = operand(rng, np.float32, (4, 5), specials=False)
    for kw in ({"ddof": 1}, {"ddof": 5, "axis": 1}, {"correction": 2, "axis": 0}, {"dtype": np.float16},
               {"axis": (0, 1), "keepdims": True}):
        for name in ("var", "std"):
            check_values(lambda a, n=name, kw=kw: getattr(mnp, n)(a, **kw),
                         lambda a, n=name, kw=kw: getattr(jnp, n)(a, **kw), x)
    m = x.mean(axis=1, keepdims=True)
    check_values(lambda a, mu: mnp.var(a, 1, mean=mu), lambda a, mu: jnp.var(a, 1, mean=mu), x, m)
    with pytest.raises(ValueError, match="ddof and correction"):
        mnp.var(x, ddof=1, correction=1)


def test_nan_reductions_all_nan_rows() -> None:
    x = np.array([[np.nan, np.nan, np.nan], [1.0, np.nan, -2.0]], np.float32)
    for name in ("nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd", "nanargmax",
                 "nanargmin"):
        check_both(lambda m, n=name: lambda a: getattr(m, n)(a, axis=1), x)


def test_average(rng: np.random.Generator) -> None:
    x = operand(rng, np.float32, (3, 4), specials=False)
    w = rng.uniform(0.5, 2.0, size=(3, 4)).astype(np.float32)
    iw = rng.integers(1, 4, size=(4,)).astype(np.int32)
    check_values(mnp.average, jnp.average, x)
    check_values(lambda a, b: mnp.average(a, weights=b), lambda a, b: jnp.average(a, weights=b), x, w)
    check_both(lambda m: lambda a, b: m.average(a, 1, b, returned=True), x, iw)
    check_values(lambda a: mnp.average(a, (0, 1), returned=True, keepdims=True),
                 lambda a: jnp.average(a, (0, 1), returned=True, keepdims=True), x.astype(np.int8))
    with pytest.raises(ValueError, match="axis must be specified"):
        mnp.average(x, weights=iw)
    with pytest.raises(ValueError, match="shape of weights"):
        mnp.average(x, 0, weights=iw)


def test_reductions_under_x64(x64: bool, rng: np.random.Generator) -> None:
    """Values where x64 changes the accumulation type (dtype rules: test_reduction_dtype_rules)."""
    x = operand(rng, np.int8, (3, 2), specials=False)
    check_both(lambda m: lambda a: (m.sum(a, 0), m.mean(a), m.argmax(a, 1), m.cumsum(a > 0)), x)


def test_methods_forward_to_reductions(rng: np.random.Generator) -> None:
    x = operand(rng, np.float32, (2, 3), specials=False)
    def methods(m: Any) -> Callable[[Any], Any]:
        return lambda a: (m.asarray(a).sum(0), m.asarray(a).max(keepdims=True), m.asarray(a).argmin(1))

    check_both(methods, x)


def test_errors() -> None:
    x = np.ones((2, 0), np.float32)
    with pytest.raises(ValueError, match="max: zero-size array to reduction operation max"):
        mnp.max(x)
    with pytest.raises(ValueError, match="min.*needs 'initial'"):
        mnp.min(np.ones(3), where=np.array([True, False, True]))
    with pytest.raises(ValueError, match="argmax: attempt to get argmax of an empty sequence"):
        mnp.argmax(x, axis=1)
    with pytest.raises(ValueError, match="sum.*out of bounds"):
        mnp.sum(np.ones((2, 3)), axis=2)
    with pytest.raises(ValueError, match="prod: repeated axis"):
        mnp.prod(np.ones((2, 3)), axis=(1, -1))
    with pytest.raises(ValueError, match="initial value must be a scalar"):
        mnp.sum(np.ones(3), initial=np.ones(2))
    with pytest.raises(TypeError, match="mean requires ndarray"):
        mnp.mean([1.0, 2.0])
    with pytest.raises(NotImplementedError, match="out"):
        mnp.sum(np.ones(3), out=np.ones(()))
    assert mlax.jit(lambda a: mnp.max(a, initial=0.0))(x).shape == ()


@pytest.mark.parametrize("fname", ["var", "std", "nanvar", "nanstd"])
@pytest.mark.parametrize("kwargs", [{}, {"axis": 0}, {"axis": 1, "ddof": 1}, {"axis": 0, "where": "mask"},
                                    {"axis": 0, "dtype": np.complex64}])
def test_complex_variance_is_real(fname: str, kwargs: dict, rng: np.random.Generator) -> None:
    """As jax: the variance of complex values is the mean of |a - mean|**2, a real number of the
    real dtype (complex only when a complex dtype is asked for)."""
    x = (rng.normal(size=(4, 5)) + 1j * rng.normal(size=(4, 5))).astype(np.complex64)
    if fname.startswith("nan"):
        x[1, 2] = np.nan
        if "where" in kwargs:
            return  # (jnp.nanvar takes where too; one masked case is enough)
    kwargs = {k: (rng.random((4, 5)) < 0.7 if v == "mask" else v) for k, v in kwargs.items()}
    want = getattr(jnp, fname)(x, **kwargs)
    got = getattr(mnp, fname)(x, **kwargs)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
