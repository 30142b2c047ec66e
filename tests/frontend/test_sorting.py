"""mlax.lax / mlax.numpy sorting against jax: values and dtypes (NaN, -0.0, ties, sizes 0/1,
every dtype), eagerly and under jit, gradients and vmap."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax as jlax

import mlax
import mlax.lax as mlax_lax
import mlax.numpy as mnp
from tests.oracle import assert_same

POOL = np.array([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan, -np.nan, 3.0])
DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.int32, np.int8, np.uint8, np.uint32, np.bool_]


def tied(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Values from a small pool (repeats, +-0, +-inf, NaN of both signs; small integers)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -4, 5, size=shape).astype(dtype)
    return rng.choice(POOL, size=shape).astype(dtype)


def assert_bits(actual: Any, expected: Any) -> None:
    """Same structure, shapes, dtypes and values; floats bit for bit except the NaN sign."""
    actual = actual if isinstance(actual, (tuple, list)) else [actual]
    expected = expected if isinstance(expected, (tuple, list)) else [expected]
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        a, e = np.asarray(a), np.asarray(e)
        assert (a.shape, a.dtype) == (e.shape, e.dtype), (a, e)
        if a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16:
            wide = [x.astype(np.float64) for x in (a, e)]
            np.testing.assert_array_equal(np.isnan(wide[0]), np.isnan(wide[1]))
            a, e = (np.where(np.isnan(x), 0, x).view(f"u{x.itemsize}") for x in (a, e))
        np.testing.assert_array_equal(a, e)


def both(fn: Callable[..., Any], *args: np.ndarray, modes: tuple[str, ...] = ("eager",)) -> None:
    """``fn(lax, numpy, *args)`` in mlax (eagerly and/or under mlax.jit) and in jax (in one
    jax.jit: one XLA compile instead of one per op)."""
    def ours(*a: Any) -> Any:
        return fn(mlax_lax, mnp, *a)

    expected = jax.jit(lambda *a: fn(jlax, jnp, *a))(*args)
    for mode in modes:
        assert_bits((mlax.jit(ours) if mode == "jit" else ours)(*args), expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_argsort_dtypes(dtype: Any, rng: np.random.Generator) -> None:
    x = tied(rng, (3, 11), dtype)
    both(lambda lax, np_, a: [np_.sort(a), np_.argsort(a, axis=0), np_.sort(a, axis=None, descending=True),
                              np_.argsort(a, descending=True), lax.sort(a, dimension=0),
                              *lax.top_k(a, 4)], x)


@pytest.mark.parametrize("shape", [(1,), (0,), (7,), (2, 0), (1, 5, 3), (33,)])
def test_shapes_under_jit(shape: tuple[int, ...], rng: np.random.Generator) -> None:
    x = tied(rng, shape, np.float32)
    k = min(2, shape[-1])
    both(lambda lax, np_, a: [np_.sort(a, axis=-1), np_.argsort(a, axis=0), *lax.top_k(a, k)], x,
         modes=("jit",))


def test_multi_operand_sort(rng: np.random.Generator) -> None:
    keys = [tied(rng, (4, 9), d) for d in (np.int8, np.float32, np.uint8)]
    payload = rng.normal(size=(4, 9)).astype(np.float16)
    both(lambda lax, np_, *ops: [lax.sort(ops, dimension=1, num_keys=2),
                                 lax.sort(ops, dimension=0, num_keys=3),
                                 lax.sort_key_val(ops[1], ops[3], dimension=0), np_.lexsort(ops[:3])],
         *keys, payload, modes=("jit",))


def test_searchsorted(rng: np.random.Generator) -> None:
    a = np.sort(tied(rng, (12,), np.float32))
    v = tied(rng, (3, 4), np.float32)
    both(lambda lax, np_, a, v: [np_.searchsorted(a, v), np_.searchsorted(a, v, side="right"),
                                 np_.searchsorted(a[::-1], v, sorter=np_.argsort(a[::-1]))], a, v)
    ints = np.sort(rng.integers(-3, 4, size=9)).astype(np.int32)
    both(lambda lax, np_, a, v: [np_.searchsorted(a, v, side=s) for s in ("left", "right")], ints,
         np.arange(-4, 5, dtype=np.int32), modes=("jit",))


def test_nonzero_and_unique(rng: np.random.Generator) -> None:
    x = tied(rng, (3, 5), np.int8)
    f = tied(rng, (13,), np.float32)

    def sized(lax: Any, np_: Any, x: Any, f: Any) -> list[Any]:
        return [*np_.nonzero(x, size=9), *np_.nonzero(x, size=20, fill_value=-1), np_.flatnonzero(x, size=4),
                np_.argwhere(x, size=6), *np_.unique(f, size=11, return_index=True, return_inverse=True,
                                                      return_counts=True),
                np_.unique(f, size=3, fill_value=7.0), np_.unique(x, size=16, return_counts=True)[1]]

    both(sized, x, f, modes=("eager", "jit"))
    # Without size (eagerly only): as jax with the true sizes.
    counts = (int(np.count_nonzero(x)), len(np.unique(f)))
    ours = [*mnp.nonzero(x), *mnp.unique(f, return_index=True, return_counts=True, return_inverse=True),
            mnp.argwhere(x)]
    theirs = jax.jit(lambda x, f: [*jnp.nonzero(x, size=counts[0]),
                                   *jnp.unique(f, return_index=True, return_counts=True, return_inverse=True,
                                               size=counts[1]), jnp.argwhere(x, size=counts[0])])(x, f)
    assert_bits(ours, theirs)
    empty = np.zeros((0,), np.float32)
    assert_bits([*mnp.nonzero(empty), mnp.unique(empty), mnp.unique(empty, size=2, fill_value=1.0)],
                [np.zeros(0, np.int32), empty, np.ones(2, np.float32)])


def test_grad() -> None:
    x = np.array([[3.0, -1.0, 2.0, 2.0, 0.5], [1.0, 1.0, -2.0, 4.0, 0.0]], np.float32)
    w = np.arange(10, dtype=np.float32).reshape(2, 5)

    def loss(lax: Any, np_: Any) -> Callable[[Any], Any]:
        return lambda a: (np_.sort(a, axis=0) * w).sum() + (lax.top_k(a, 3)[0] ** 2).sum() + \
            (lax.sort_key_val(a[0], a[1])[1] * w[0]).sum()

    assert_same(mlax.grad(loss(mlax_lax, mnp))(x), jax.grad(loss(jlax, jnp))(x))
    assert_same(mlax.jit(mlax.grad(loss(mlax_lax, mnp)))(x), jax.grad(loss(jlax, jnp))(x))
    v = np.ones_like(x)
    assert_same(mlax.jvp(loss(mlax_lax, mnp), (x,), (v,))[1], jax.jvp(loss(jlax, jnp), (x,), (v,))[1])


def test_vmap(rng: np.random.Generator) -> None:
    x = tied(rng, (4, 3, 6), np.float32)
    order = np.argsort(rng.random(6)).astype(np.int32)

    def fn(lax: Any, np_: Any, a: Any) -> list[Any]:
        return [np_.sort(a, axis=0), np_.argsort(a), *lax.top_k(a, 2),
                lax.sort((a, -a), dimension=0, num_keys=1)[1]]

    ours = mlax.vmap(lambda a: fn(mlax_lax, mnp, a))(x)
    assert_bits(ours, jax.vmap(lambda a: fn(jlax, jnp, a))(x))
    # an unbatched permutation applied to batched values, under jit
    applied = mlax.jit(mlax.vmap(lambda a: mlax_lax.apply_permutation(a, order, 0)))(x[:, 0])
    assert_bits(applied, x[:, 0][:, order])


def test_vmap_of_compactions(rng: np.random.Generator) -> None:
    """nonzero / unique / searchsorted with a size, per row: the batched sorts and permutations."""
    x = rng.integers(-2, 3, size=(4, 7)).astype(np.int32)

    def fn(np_: Any) -> Callable[[Any], list[Any]]:
        return lambda r: [*np_.nonzero(r, size=3), np_.unique(r, size=4, return_counts=True)[1],
                          np_.searchsorted(np_.sort(r), r, side="right")]

    assert_bits(mlax.vmap(fn(mnp))(x), jax.vmap(fn(jnp))(x))


def test_grad_of_grad() -> None:
    x = np.array([3.0, 1.0, 2.0, 0.0, 5.0], np.float32)

    def f(np_: Any, grad: Any) -> Any:
        return grad(lambda v: np_.sum(grad(lambda w: np_.sum(np_.sort(w) ** 3 * np_.arange(5.0)))(v)))

    assert_same(f(mnp, mlax.grad)(x), f(jnp, jax.grad)(x))


def test_errors() -> None:
    with pytest.raises(TypeError, match="rank at least 1"):
        mlax_lax.sort(mnp.float32(1.0))
    with pytest.raises(ValueError, match="num_keys"):
        mlax_lax.sort((mnp.ones(3), mnp.ones(3)), num_keys=3)
    with pytest.raises(ValueError, match="k = 4 must be in"):
        mlax_lax.top_k(mnp.ones(3), 4)
    with pytest.raises(TypeError, match="size argument"):
        mlax.jit(lambda a: mnp.nonzero(a))(np.ones(3))
