"""mlax.lax.mulhi and shape_as_value, mlax.random.key_dtype against jax; and the not-yet names
of mlax.lax (rng_uniform, rng_bit_generator, ragged_dot_general)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import mlax
from mlax import lax
from tests.oracle import assert_same

INT_DTYPES = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32]


def _extremes(rng: np.random.Generator, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    x.flat[:4] = [info.min, info.max, 0, info.max // 2 + 1][: x.size]
    return x


def test_mulhi_all_dtypes_eager_and_jit() -> None:
    rng = np.random.default_rng(0)
    pairs = []
    for i, dtype in enumerate(INT_DTYPES):
        x = _extremes(rng, dtype, (int(rng.integers(4, 9)), 3))
        # every other row multiplies by a rank-0 operand, which broadcasts
        y = _extremes(rng, dtype, x.shape) if i % 2 else np.asarray(_extremes(rng, dtype, (9,))[-1])
        pairs.append((x, y))
    expected = [jax.lax.mulhi(x, y) for x, y in pairs]
    for (x, y), e in zip(pairs, expected, strict=True):
        assert_same(lax.mulhi(x, y), e)
    jitted = mlax.jit(lambda ps: [lax.mulhi(x, y) for x, y in ps])(pairs)
    for actual, e in zip(jitted, expected, strict=True):
        assert_same(actual, e)


def test_mulhi_64_bit_weak_and_vmap() -> None:
    rng = np.random.default_rng(1)
    mlax.config.update("x64", True)
    try:
        for dtype in (np.int64, np.uint64):
            x, y = _extremes(rng, dtype, (7,)), _extremes(rng, dtype, (7,))
            assert_same(lax.mulhi(x, y), jax.lax.mulhi(x, y))
    finally:
        mlax.config.update("x64", False)
    assert_same(lax.mulhi(3, 4), jax.lax.mulhi(3, 4))
    assert_same(lax.mulhi(-(2**30), 6), jax.lax.mulhi(-(2**30), 6))
    x, y = _extremes(rng, np.int32, (3, 4)), _extremes(rng, np.int32, (3, 4))
    assert_same(mlax.vmap(lax.mulhi)(x, y), jax.vmap(jax.lax.mulhi)(x, y))


@pytest.mark.parametrize("x,y", [(1.0, 2.0), (np.int32(1), np.int8(2)), (True, False),
                                 (np.ones((2, 3), np.int32), np.ones((3,), np.int32)),
                                 (np.ones((2, 3), np.int32), np.ones((3, 2), np.int32))])
def test_mulhi_errors(x: Any, y: Any) -> None:
    with pytest.raises(TypeError):
        jax.lax.mulhi(x, y)
    with pytest.raises(TypeError, match="mulhi"):
        lax.mulhi(x, y)


@pytest.mark.parametrize("shape", [(), (3,), (2, 0, 5), (2**31,)])
def test_shape_as_value(shape: tuple[int, ...]) -> None:
    expected, actual = jax.lax.shape_as_value(shape), lax.shape_as_value(shape)
    assert isinstance(actual, np.ndarray) == isinstance(expected, np.ndarray)
    assert_same(actual, expected)


def test_key_dtype() -> None:
    assert mlax.random.key_dtype() == jax.random.key_dtype()
    assert mlax.random.key_dtype("threefry2x32") == mlax.random.key(0).dtype
    assert mlax.random.key_dtype("rbg") == jax.random.key_dtype("rbg")  # keys of every jax implementation
    with pytest.raises(TypeError):
        mlax.random.key_dtype(3)


@pytest.mark.parametrize("name,args", [
    ("rng_uniform", (0.0, 1.0, (3,))),
    ("rng_bit_generator", (np.arange(4, dtype=np.uint32), (2, 3))),
    ("ragged_dot_general", (np.ones((4, 2), np.float32), np.ones((2, 2, 3), np.float32),
                            np.array([1, 3], np.int32), None)),
])
def test_not_yet(name: str, args: tuple[Any, ...]) -> None:
    fn = getattr(lax, name)
    assert fn.mlax_not_yet and hasattr(jax.lax, name)
    with pytest.raises(NotImplementedError, match=f"mlax.lax.{name} needs"):
        fn(*args)
