"""mlax.vmap against jax.vmap for the mlax.numpy functions of the numpy test tables
(elementwise unary and binary, manipulation, reductions, products, einsum), with a random
in_axes per argument (sometimes None) and a random out_axes, on random values."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.numpy.test_elementwise import BINARY, UNARY
from tests.numpy.test_linalg import EINSUM, PRODUCT_SHAPES
from tests.numpy.test_manipulation import CASES
from tests.numpy.test_reductions import CUMULATIVE, REDUCTIONS, SINGLE_AXIS
from tests.oracle import assert_same, random_array

BATCH = 3
NOT_IN_JAX = {"real", "imag", "conj", "conjugate", "isreal", "iscomplex"}
INTEGER_ONLY = {"bitwise_count", "bitwise_not", "invert", "bitwise_invert", "bitwise_and", "bitwise_or",
                "bitwise_xor", "left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift"}


def _batched_args(rng: np.random.Generator, shapes: list[tuple[int, ...]], dtype: Any,
                  low: float, high: float) -> tuple[tuple[np.ndarray, ...], tuple[int | None, ...]]:
    """Arguments with a batch axis of size BATCH inserted at a random position (or none for
    some arguments, but at least one batched)."""
    args, axes = [], []
    batched_any = False
    for k, shape in enumerate(shapes):
        unbatched = len(shapes) > 1 and rng.random() < 0.3 and (batched_any or k < len(shapes) - 1)
        if unbatched:
            args.append(random_array(rng, shape, dtype, low, high))
            axes.append(None)
            continue
        axis = int(rng.integers(0, len(shape) + 1))
        full = (*shape[:axis], BATCH, *shape[axis:])
        args.append(random_array(rng, full, dtype, low, high))
        axes.append(axis)
        batched_any = True
    if not batched_any:  # make the last one batched
        shape = shapes[-1]
        args[-1] = random_array(rng, (BATCH, *shape), dtype, low, high)
        axes[-1] = 0
    return tuple(args), tuple(axes)


def _compare(ours: Any, theirs: Any, shapes: list[tuple[int, ...]], rng: np.random.Generator,
             low: float = -2.0, high: float = 2.0) -> None:
    args, axes = _batched_args(rng, shapes, np.float32, low, high)
    try:
        out = jax.eval_shape(jax.vmap(theirs, in_axes=axes), *args)
    except (TypeError, ValueError, NotImplementedError) as refusal:
        # Only jax's own refusal of the case skips it, and mlax must refuse it the same way;
        # any other error, and anything mlax raises where jax does not (below), fails the test.
        with pytest.raises(type(refusal)):
            mlax.vmap(ours, in_axes=axes)(*args)
        pytest.skip(f"jax refuses this case too: {type(refusal).__name__}: {refusal}")
    ranks = [len(o.shape) for o in jax.tree_util.tree_leaves(out)]
    out_axes = int(rng.integers(0, min(ranks))) if ranks and min(ranks) > 0 else 0
    expected = jax.vmap(theirs, in_axes=axes, out_axes=out_axes)(*args)
    got = mlax.vmap(ours, in_axes=axes, out_axes=out_axes)(*args)
    assert_same(got, expected, rtol=2e-5, atol=1e-6, check_weak_type=False)
    on_xla = mlax.jit(mlax.vmap(ours, in_axes=axes, out_axes=out_axes), backend="xla")(*args)
    assert_same(on_xla, expected, rtol=2e-5, atol=1e-6, check_weak_type=False)


@pytest.mark.parametrize("name", sorted(set(UNARY) - NOT_IN_JAX - INTEGER_ONLY))
def test_unary(name: str, rng: np.random.Generator) -> None:
    low, high = (1.2, 2.0) if name == "arccosh" else (0.2, 0.8)
    _compare(getattr(mnp, name), UNARY[name], [(2, 3)], rng, low, high)


@pytest.mark.parametrize("name", sorted(set(BINARY) - NOT_IN_JAX - INTEGER_ONLY))
def test_binary(name: str, rng: np.random.Generator) -> None:
    _compare(getattr(mnp, name), BINARY[name], [(3, 2), (3, 2)], rng, 0.3, 1.5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_manipulation(name: str, rng: np.random.Generator) -> None:
    build, shapes = CASES[name][0], CASES[name][1]
    _compare(build(mnp), build(jnp), list(shapes), rng)


# Cumulative and single-axis reductions take one axis: left out of the tuple-of-axes case.
REDUCTION_CASES = [(name, axis) for name in sorted(set(REDUCTIONS) | set(CUMULATIVE))
                   for axis in (None, 1, (0, 2))
                   if not (isinstance(axis, tuple) and (name in CUMULATIVE or name in SINGLE_AXIS))]


@pytest.mark.parametrize("name,axis", REDUCTION_CASES)
def test_reductions(name: str, axis: Any, rng: np.random.Generator) -> None:
    ours, theirs = getattr(mnp, name), getattr(jnp, name)
    _compare(lambda x: ours(x, axis=axis), lambda x: theirs(x, axis=axis), [(2, 3, 4)], rng, 0.5, 1.5)


PRODUCTS = [(name, k) for name, shapes in PRODUCT_SHAPES.items() for k in range(len(shapes))]


@pytest.mark.parametrize("name,k", PRODUCTS)
def test_products(name: str, k: int, rng: np.random.Generator) -> None:
    _compare(getattr(mnp, name), getattr(jnp, name), list(PRODUCT_SHAPES[name][k]), rng)


@pytest.mark.parametrize("spec,shapes", EINSUM)
def test_einsum(spec: str, shapes: list[tuple[int, ...]], rng: np.random.Generator) -> None:
    _compare(lambda *a: mnp.einsum(spec, *a), lambda *a: jnp.einsum(spec, *a), list(shapes), rng)
