"""mlax.numpy set operations against jax.numpy: isin, setdiff1d, union1d, intersect1d (with
indices), setxor1d, with and without ``size=``/``fill_value=`` (padding included), assume_unique,
NaNs and empty inputs, the array API's unique_* functions; eager, under mlax.jit where sizes are
static, under vmap, and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.numpy.helpers import check_both
from tests.oracle import assert_same


def _sets(rng: np.random.Generator, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """Two overlapping random sets with repeats (floats with a NaN in each)."""
    a = rng.integers(0, 8, size=(3, 4)).astype(dtype)
    b = rng.integers(3, 12, size=7).astype(dtype)
    if np.dtype(dtype).kind == "f":
        a[0, 0], b[1] = np.nan, np.nan
    return a, b


def _pairs(a: np.ndarray, b: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    empty = b[:0]
    return [(a, b), (b, a), (a, empty), (empty, b), (empty, empty), (a, b.astype(np.float16))]


def _sized(m: Any, size: int, fill: Any, assume_unique: bool) -> Callable[..., Any]:
    """Every jit-compatible set operation with ``size=`` at once."""
    def run(x: Any, y: Any) -> Any:
        kw = {"size": size, "fill_value": fill}
        return (m.isin(x, y), m.isin(x, y, invert=True), m.setdiff1d(x, y, assume_unique, **kw),
                m.setxor1d(x, y, assume_unique, **kw), m.intersect1d(x, y, assume_unique, **kw),
                m.union1d(x, y, size=size + 8, fill_value=fill))

    return run


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_sized_set_operations(dtype: Any, rng: np.random.Generator) -> None:
    """Static sizes smaller and larger than the result, default and given fill values: every
    pair of inputs eagerly, one under mlax.jit too."""
    a, b = _sets(rng, dtype)
    options = [(3, None, False), (12, 5, False), (12, None, False), (3, None, False), (12, 5, False),
               (2, -1, False)]
    pairs = [*_pairs(a, b), (np.unique(a), np.unique(b))]
    options.append((12, None, True))

    def every_pair(m: Any, pairs: Any) -> list[Any]:
        return [_sized(m, *option)(x, y) for (x, y), option in zip(pairs, options, strict=True)]

    expected = jax.jit(lambda pairs: every_pair(jnp, pairs))(pairs)  # one XLA compile for all
    for got, want in zip(every_pair(mnp, pairs), expected, strict=True):
        assert_same(got, want)
    if dtype != np.float32:
        return  # one dtype under mlax.jit as well: its compiles are most of this test's time
    check_both(lambda m: lambda x, y, ux, uy: (
        _sized(m, 4, None, False)(x, y), _sized(m, 3, -1, True)(ux, uy),
        m.intersect1d(x, y, return_indices=True, size=4),
        m.intersect1d(y, x, return_indices=True, size=9, fill_value=-1),
        m.intersect1d(ux, uy, True, True, size=6)), a, b, np.unique(a), np.unique(b))


@pytest.mark.parametrize("dtype", [np.int8, np.float32])
def test_unsized_set_operations(dtype: Any, rng: np.random.Generator) -> None:
    """Without ``size`` the results depend on the values: eager only."""
    a, b = _sets(rng, dtype)
    for x, y in _pairs(a, b):
        for assume_unique in (False, True):
            if assume_unique:
                x, y = np.unique(x), np.unique(y)
            for name in ("setdiff1d", "setxor1d"):
                assert_same(getattr(mnp, name)(x, y, assume_unique), getattr(jnp, name)(x, y, assume_unique))
            for indices in (False, True):
                assert_same(mnp.intersect1d(x, y, assume_unique, indices),
                            jnp.intersect1d(x, y, assume_unique, indices))
        assert_same(mnp.union1d(x, y), jnp.union1d(x, y))


def test_unique_array_api(rng: np.random.Generator) -> None:
    """NaNs are each distinct; the inverse has the input's shape; results are named tuples."""
    a, _ = _sets(rng, np.float32)
    a[2, 3] = np.nan
    names = ("unique_all", "unique_counts", "unique_inverse", "unique_values")

    def spell(m: Any, size: int | None, fill: Any) -> Callable[..., Any]:
        return lambda x: tuple(tuple(r) if isinstance(r, tuple) else r
                               for r in (getattr(m, n)(x, size=size, fill_value=fill) for n in names))

    for size, fill in ((5, None), (14, -2.0)):
        check_both(lambda m, size=size, fill=fill: spell(m, size, fill), a)
    assert_same(spell(mnp, None, None)(a), spell(jnp, None, None)(a))
    result = mnp.unique_all(a)
    assert result.inverse_indices.shape == a.shape and result._fields == jnp.unique_all(a)._fields


def test_unique_inverse_has_input_shape(rng: np.random.Generator) -> None:
    """jnp.unique (axis=None) reshapes the inverse to the input's shape, empty and rank 0 included."""
    a = rng.integers(0, 5, size=(2, 3, 2)).astype(np.float32)

    def spell(m: Any) -> Callable[..., Any]:
        return lambda x: (m.unique(x, return_inverse=True, size=6),
                          m.unique(x, True, True, True, size=4, fill_value=-1.0))

    check_both(spell, a)
    for x in (a, a[:, :0], np.float32(2.5)):
        assert_same(mnp.unique(x, return_inverse=True), jnp.unique(x, return_inverse=True))


def test_vmap_and_errors(rng: np.random.Generator) -> None:
    a = rng.integers(0, 8, size=(3, 6)).astype(np.int32)
    b = rng.integers(3, 12, size=(3, 5)).astype(np.int32)
    def batched(m: Any, x: Any, y: Any) -> Any:
        return m.isin(x, y), m.setdiff1d(x, y, size=4), m.intersect1d(x, y, size=3, return_indices=True)

    expected = jax.jit(jax.vmap(lambda x, y: batched(jnp, x, y)))(a, b)
    assert_same(mlax.vmap(lambda x, y: batched(mnp, x, y))(a, b), expected)
    with pytest.raises(ValueError, match="method"):
        mnp.isin(a, b, method="hash")
    for name, named in (("setdiff1d", "setdiff1d"), ("union1d", "union1d"), ("setxor1d", "unique"),
                        ("intersect1d", "unique")):
        with pytest.raises(jax.errors.ConcretizationTypeError, match=f"arose in mlax.numpy.{named}"):
            mlax.jit(getattr(mnp, name))(a, b)
    with pytest.raises(jax.errors.ConcretizationTypeError, match="unique.*size argument"):
        mlax.jit(mnp.unique)(a)
    with pytest.raises(TypeError):
        mnp.isin([1, 2], a)
