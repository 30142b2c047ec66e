"""Objects that are no arrays but give one by ``__jax_array__`` (flax.nnx's Variables) are
taken by jnp functions, eagerly and under jit and grad, as jax takes them."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import mlax
from tests.oracle import assert_same


@jax.tree_util.register_pytree_node_class
class Boxed:
    """A box around an array, a pytree convertible by ``__jax_array__`` as flax's Variables are
    (jax's jnp functions are jitted: their arguments must be pytrees of arrays)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __jax_array__(self) -> Any:
        return self.value

    def tree_flatten(self) -> tuple[tuple[Any], None]:
        return (self.value,), None

    @classmethod
    def tree_unflatten(cls, aux: None, children: tuple[Any]) -> Boxed:
        return cls(children[0])


def _fun(lib: Any) -> Any:
    def f(x: Any) -> Any:
        b = Boxed(x)
        return (lib.numpy.sin(b) * lib.numpy.mean(b)
                + lib.numpy.sum(b, axis=0) + lib.numpy.maximum(b, 0.5))
    return f


@pytest.mark.parametrize("how", ["eager", "jit", "grad"])
def test_jax_array_objects_as_jax(how: str) -> None:
    x = np.random.default_rng(3538).normal(size=(3,)).astype(np.float32)

    def run(lib: Any) -> Any:
        f = _fun(lib)
        if how == "grad":
            return lib.grad(lambda x: f(x).sum())(x)
        return (lib.jit(f) if how == "jit" else f)(x)

    assert_same(run(mlax), run(jax), rtol=1e-6, atol=1e-6)


def test_other_objects_still_refused() -> None:
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        mlax.numpy.sin(object())
