"""``isinstance(tracer, mlax.Array)`` is True, as ``isinstance(tracer, jax.Array)`` in JAX, while
mlax itself never takes a tracer for a concrete array."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.core import Tracer, to_numpy
from tests.oracle import assert_same, random_array


def _check(x: Any) -> Any:
    """What JAX's own ``_check`` says: (isinstance of Array, of numpy.ndarray, subclass of Array)."""
    return (isinstance(x, mlax.Array), isinstance(x, mnp.ndarray), issubclass(type(x), mlax.Array))


def _jax_check(x: Any) -> Any:
    return (isinstance(x, jax.Array), isinstance(x, jnp.ndarray), issubclass(type(x), jax.Array))


TRANSFORMS: list[tuple[str, Callable[..., Any], Callable[..., Any]]] = [
    ("jit", mlax.jit, jax.jit),
    ("grad", mlax.grad, jax.grad),
    ("vmap", mlax.vmap, jax.vmap),
    ("grad_in_jit", lambda f: mlax.jit(mlax.grad(f)), lambda f: jax.jit(jax.grad(f))),
]


@pytest.mark.parametrize("name, mlax_t, jax_t", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_tracers_are_instances_as_in_jax(name: str, mlax_t: Any, jax_t: Any) -> None:
    seen: dict[str, Any] = {}

    def fun(key: str, check: Any, v: Any) -> Any:
        seen[key] = check(v)
        return (v * v).sum()

    mlax_t(lambda v: fun("mlax", _check, v))(np.ones(3, np.float32))
    jax_t(lambda v: fun("jax", _jax_check, v))(np.ones(3, np.float32))
    assert seen["mlax"] == seen["jax"] == (True, True, False)


def test_concrete_values() -> None:
    for mlax_value, jax_value in [(mnp.ones(2), jnp.ones(2)), (np.ones(2), np.ones(2)), (1.0, 1.0),
                                  (np.float32(1), np.float32(1)), ([1.0], [1.0])]:
        assert _check(mlax_value) == _jax_check(jax_value), mlax_value
    assert type(mnp.ones(2)) is mlax.Array
    assert not isinstance(jnp.ones(2), mlax.Array)
    assert not issubclass(Tracer, mlax.Array)


def test_tracers_are_never_read_as_concrete_arrays(rng: np.random.Generator) -> None:
    x = random_array(rng, (5,), np.float32)
    i = np.array([3, 0, 3], np.int32)

    def check(v: Any, idx: Any) -> Any:
        with pytest.raises(mlax.ConcretizationTypeError):
            to_numpy(v)
        with pytest.raises(jax.errors.TracerArrayConversionError):  # jax's class for np.asarray
            np.asarray(v)
        with pytest.raises(IndexError, match="dynamic_slice"):
            v[idx[0]:]  # a traced slice bound is not a concrete scalar Array
        return v[idx], v[mnp.asarray(2):], v[mnp.asarray(idx[::-1])]

    expected = (jnp.asarray(x)[i], jnp.asarray(x)[2:], jnp.asarray(x)[i[::-1]])
    assert_same(mlax.jit(check)(x, i), expected)
