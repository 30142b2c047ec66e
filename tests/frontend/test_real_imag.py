"""``.real``, ``.imag``, ``.conj()``, ``.conjugate()`` and their mlax.numpy functions against
jax's on real dtypes (mlax has no complex ones): values, dtypes, weak types; eagerly, under jit,
grad and vmap."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import ALL_DTYPES, assert_same, random_array, random_shape

NAMES = ("real", "imag", "conj", "conjugate")


def parts(np_mod: Any, x: Any) -> dict[str, Any]:
    """Each part through the method or property and through the function."""
    return {"real": x.real, "imag": x.imag, "conj": x.conj(), "conjugate": x.conjugate(),
            **{f"fn_{name}": getattr(np_mod, name)(x) for name in NAMES}}


def _values(rng: np.random.Generator, dtype: Any) -> list[Any]:
    """A random array of ``dtype``, and a weakly typed one (a Python scalar made an array)."""
    array = random_array(rng, random_shape(rng), dtype)
    scalar = float(rng.uniform(-3, 3)) if np.dtype(dtype).kind == "f" else int(rng.integers(-5, 5))
    return [array, scalar]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_eager_and_jitted_match_jax(rng: np.random.Generator, dtype: Any) -> None:
    for value in _values(rng, dtype):
        expected = parts(jnp, jnp.asarray(value))
        assert_same(parts(mnp, mnp.asarray(value)), expected)
        assert_same(mlax.jit(lambda v: parts(mnp, v))(value), jax.jit(lambda v: parts(jnp, v))(value))


@pytest.mark.parametrize("value", [2.5, -3, True], ids=repr)
def test_functions_on_python_scalars(value: Any) -> None:
    for name in NAMES:
        assert_same(getattr(mnp, name)(value), getattr(jnp, name)(value))


def _loss(np_mod: Any, x: Any) -> Any:
    return np_mod.sum(x.real * x + x.imag * 3.0 + x.conj() * np_mod.sin(x.conjugate()))


def test_under_grad_and_vmap(rng: np.random.Generator) -> None:
    x = random_array(rng, (4, 3), np.float32)
    assert_same(mlax.grad(lambda v: _loss(mnp, v))(x), jax.grad(lambda v: _loss(jnp, v))(x), rtol=1e-5)
    assert_same(mlax.jit(mlax.grad(lambda v: _loss(mnp, v)))(x), jax.grad(lambda v: _loss(jnp, v))(x),
                rtol=1e-5)
    assert_same(mlax.vmap(lambda v: parts(mnp, v))(x), jax.vmap(lambda v: parts(jnp, v))(x))
