"""mlax.Array: immutability, NumPy interop, attributes, conversions, repr."""

from __future__ import annotations

import operator
import pickle

import jax
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import random_array


def test_attributes(rng: np.random.Generator) -> None:
    x = mnp.asarray(random_array(rng, (2, 3, 4), np.float32))
    assert isinstance(x, mlax.Array)
    assert x.shape == (2, 3, 4) and x.ndim == 3 and x.size == 24 and x.dtype == np.float32
    assert len(x) == 2
    assert x.block_until_ready() is x
    assert mlax.block_until_ready({"a": x})["a"] is x


def test_immutable(rng: np.random.Generator) -> None:
    x = mnp.asarray(random_array(rng, (3,), np.float32))
    with pytest.raises((ValueError, TypeError)):
        np.asarray(x)[0] = 1.0
    with pytest.raises(TypeError):
        x[0] = 1.0  # type: ignore[index]


def test_numpy_interop(rng: np.random.Generator) -> None:
    data = random_array(rng, (2, 3), np.float32)
    x = mnp.asarray(data)
    np.testing.assert_array_equal(np.asarray(x), data)
    np.testing.assert_array_equal(np.asarray(x, dtype=np.float64), data.astype(np.float64))
    np.testing.assert_array_equal(np.from_dlpack(x), data)
    assert x.tolist() == data.tolist()
    assert mnp.asarray(np.float32(2.5)).item() == 2.5


def test_scalar_conversions() -> None:
    x = mnp.asarray(np.int32(7))
    assert int(x) == 7 and float(x) == 7.0 and bool(x)
    assert [10, 20, 30, 40, 50, 60, 70, 80][x] == 80  # __index__
    assert f"{mnp.asarray(np.float32(1.5)):.2f}" == "1.50"


def test_repr_and_str() -> None:
    x = mnp.asarray(np.arange(3, dtype=np.int32))
    assert repr(x) == "Array([0, 1, 2], dtype=int32)"
    assert str(x) == "[0 1 2]"
    assert "weak_type=True" in repr(mnp.asarray(1.0))


def test_pickle_roundtrip(rng: np.random.Generator) -> None:
    x = mnp.asarray(random_array(rng, (2, 2), np.float32))
    y = pickle.loads(pickle.dumps(x))
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    assert y.dtype == x.dtype


def test_unhashable() -> None:
    with pytest.raises(TypeError, match="unhashable"):
        hash(mnp.asarray(1.0))


def test_devices() -> None:
    """jax's devices (the test session has 4 XLA CPU devices); a host array is on the first."""
    import jax

    devices = mlax.devices()
    assert devices == jax.devices() and all(d.platform == "cpu" for d in devices)
    assert mlax.device_count() == len(devices) == 4
    assert mnp.asarray(1.0).device == devices[0]


def test_tree_util_is_jax_compatible() -> None:
    from typing import NamedTuple

    class Pair(NamedTuple):
        a: object
        b: object

    leaves, tree = mlax.tree_util.tree_flatten(Pair(1, {"x": 2}))
    assert leaves == [1, 2]
    assert mlax.tree_util.tree_unflatten(tree, [3, 4]) == Pair(3, {"x": 4})
    assert mlax.tree_util.tree_map(lambda v: v * 2, [1, (2,)]) == [2, (4,)]


def test_python_scalars_are_weak_numpy_scalars_are_not() -> None:
    import jax.numpy as jnp

    for value in (2.0, 3, np.float64(2.0), np.int64(3), np.float32(1.5), True):
        assert mnp.asarray(value).weak_type == jnp.asarray(value).weak_type, value
        assert mnp.array(value).weak_type == jnp.array(value).weak_type, value
        assert mnp.asarray(value).dtype == jnp.asarray(value).dtype, value


def test_jax_arrays_are_array_like() -> None:
    """Code moving from JAX may still hold jax.Arrays: mlax reads them as NumPy arrays."""
    import jax.numpy as jnp

    a, b = mnp.arange(3.0), jnp.arange(3.0) * 2
    np.testing.assert_array_equal(np.asarray(a - b), [0.0, -1.0, -2.0])
    np.testing.assert_array_equal(np.asarray(b - a), [0.0, 1.0, 2.0])
    assert isinstance(b - a, mlax.Array)
    np.testing.assert_array_equal(np.asarray(mlax.jit(lambda x, y: x * y)(b, a)), [0.0, 2.0, 8.0])


class _Boxed:
    """An object that converts itself (``__jax_array__``), as flax.nnx's Variable does."""

    def __init__(self, value):
        self.value = value

    def __jax_array__(self):
        return self.value


@pytest.mark.parametrize("op", ["add", "mul", "sub", "truediv"])
def test_operators_take_jax_array_objects(op: str) -> None:
    rng = np.random.default_rng(7)
    x = rng.uniform(1, 2, (3,)).astype(np.float32)
    for boxed in (2.5, rng.uniform(1, 2, (3,)).astype(np.float32)):
        fn = getattr(operator, op)
        want = fn(jax.numpy.asarray(x), _Boxed(boxed))
        got = fn(mlax.numpy.asarray(x), _Boxed(boxed))
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
        assert got.dtype == want.dtype


def test_arrays_are_weakly_referenceable() -> None:
    """As jax's Arrays (distrax keeps weak references to them)."""
    import gc
    import weakref

    for lib in (jax, mlax):
        a = lib.numpy.ones(2)
        ref = weakref.ref(a)
        assert ref() is a
        del a
        gc.collect()
        assert ref() is None
