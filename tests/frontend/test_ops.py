"""mlax.ops' segment reductions against jax.ops: random data and ids (out-of-range and negative
ids among them, empty segments), float/int/bool data, 2-D ids, bucket_size, every mode; eagerly,
under jit (native and XLA), under grad and vmap; install_as_jax's jax.ops; the errors."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import mlax
from tests.oracle import assert_same, check_against_jax, random_array

NAMES = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def _ids(rng: np.random.Generator, shape: tuple[int, ...], n: int) -> np.ndarray:
    """Ids in [-2, n + 2): some dropped (out of range, negative), some segments empty."""
    return rng.integers(-2, n + 2, size=shape).astype(np.int32)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_segment_values(rng: np.random.Generator, name: str, dtype: Any) -> None:
    rows, n = int(rng.integers(1, 12)), int(rng.integers(1, 6))
    data = random_array(rng, (rows, *[int(d) for d in rng.integers(1, 4, size=rng.integers(0, 3))]), dtype)
    ids = _ids(rng, (rows,), n)
    kwargs = [dict(num_segments=n), dict(num_segments=n, bucket_size=int(rng.integers(1, 5))),
              dict(num_segments=n, mode="clip"), dict(num_segments=n, indices_are_sorted=False)]
    if dtype == np.bool_ and name in ("segment_sum", "segment_prod"):  # jax: add/mul refuse booleans
        with pytest.raises(TypeError, match="does not accept dtype bool"):
            getattr(mlax.ops, name)(data, ids, n)
        return
    for kw in kwargs:
        check_against_jax(lambda d, i, kw=kw: getattr(mlax.ops, name)(d, i, **kw),
                          lambda d, i, kw=kw: getattr(jax.ops, name)(d, i, **kw), data, ids,
                          rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_segment_default_num_segments(rng: np.random.Generator, name: str) -> None:
    """num_segments from the largest (concrete) id."""
    data = random_array(rng, (4, 3, 2), np.float32)
    ids = rng.integers(0, 5, size=(4,)).astype(np.int32)
    ours, theirs = getattr(mlax.ops, name), getattr(jax.ops, name)
    check_against_jax(lambda d: ours(d, ids), lambda d: theirs(d, ids), data)
    check_against_jax(lambda d, i: ours(d, i, 6), lambda d, i: theirs(d, i, 6), data, ids, rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_segment_grad_and_vmap(rng: np.random.Generator, name: str) -> None:
    data = random_array(rng, (9, 2), np.float32, 0.5, 2.0)
    ids = np.array([0, 2, 2, 4, 1, 0, 2, 7, -1], np.int32)

    def loss(module: Any) -> Any:
        return lambda d: (getattr(module.ops, name)(d, ids, 5) * np.arange(10).reshape(5, 2)).sum()

    if name == "segment_prod":  # jax differentiates scatter_mul only for unique indices
        with pytest.raises(NotImplementedError, match="unique_indices"):
            jax.grad(loss(jax))(data)
        with pytest.raises(ValueError, match="scatter_mul with respect to its updates"):
            mlax.grad(loss(mlax))(data)
    else:
        assert_same(mlax.grad(loss(mlax))(data), jax.grad(loss(jax))(data), rtol=1e-5)
        assert_same(mlax.jit(mlax.grad(loss(mlax)))(data), jax.grad(loss(jax))(data), rtol=1e-5)
    batch = random_array(rng, (3, 9, 2), np.float32)
    assert_same(mlax.vmap(lambda d: getattr(mlax.ops, name)(d, ids, 5))(batch),
                jax.vmap(lambda d: getattr(jax.ops, name)(d, ids, 5))(batch), rtol=1e-5)
    batched_ids = rng.integers(0, 5, size=(3, 9)).astype(np.int32)
    assert_same(mlax.vmap(lambda d, i: getattr(mlax.ops, name)(d, i, 5))(batch, batched_ids),
                jax.vmap(lambda d, i: getattr(jax.ops, name)(d, i, 5))(batch, batched_ids), rtol=1e-5)


def test_segment_errors() -> None:
    data, ids = np.ones((3, 2), np.float32), np.array([0, 1, 1], np.int32)
    with pytest.raises(mlax.ConcretizationTypeError):
        mlax.jit(lambda d, i: mlax.ops.segment_sum(d, i))(data, ids)
    with pytest.raises(ValueError, match="non-negative"):
        mlax.ops.segment_sum(data, ids, -1)
    with pytest.raises(TypeError, match="segment_ids must be integers"):
        mlax.ops.segment_sum(data, ids.astype(np.float32), 2)
    for bad in (np.array([0, 1], np.int32), np.zeros((3, 2), np.int32)):
        with pytest.raises(ValueError, match="one id per row"):
            mlax.ops.segment_sum(data, bad, 2)
    with pytest.raises(TypeError, match="concrete integer"):
        mlax.jit(lambda d, n: mlax.ops.segment_sum(d, ids, n))(data, 2)


def test_empty_ids() -> None:
    data, ids = np.zeros((0, 2), np.float32), np.zeros((0,), np.int32)
    for name in NAMES:
        with pytest.raises(ValueError, match="zero-size array"):
            getattr(mlax.ops, name)(data, ids)
        assert_same(getattr(mlax.ops, name)(data, ids, 3), getattr(jax.ops, name)(data, ids, 3))
