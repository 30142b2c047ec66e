"""mlax.named_scope / named_call as jax's: the traced ops carry the scope path in their
locations; values and transformations are unaffected."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import assert_same, random_array


def block(np_, lib, x):
    with lib.named_scope("block"):
        with lib.named_scope("layer1"):
            y = np_.sin(x)
        z = lib.named_call(lambda v: v * 3.0, name="triple")(y)
    return np_.tanh(z) + 1.0


def test_scopes_label_the_ops(rng: np.random.Generator) -> None:
    x = random_array(rng, (3,), np.float32)
    text = mlax.jit(lambda x: block(mnp, mlax, x)).lower(x).as_text("mlax")
    sin = next(line for line in text.splitlines() if '"mlax.sin"' in line)
    mul = next(line for line in text.splitlines() if '"mlax.mul"' in line)
    tanh = next(line for line in text.splitlines() if '"mlax.tanh"' in line)
    locs = {line.split(" = ", 1)[0]: line for line in text.splitlines() if line.startswith("#loc")}
    assert "block/layer1/" in locs[sin.rsplit("loc(", 1)[1].rstrip(")")]
    assert "block/triple/" in locs[mul.rsplit("loc(", 1)[1].rstrip(")")]
    assert "block/" not in locs[tanh.rsplit("loc(", 1)[1].rstrip(")")]


@pytest.mark.parametrize("backend", ["cpu", "xla"])
def test_values_and_transformations_are_unaffected(rng: np.random.Generator, backend: str) -> None:
    x = random_array(rng, (4,), np.float32)
    want = jax.jit(lambda x: block(jnp, jax, x))(x)
    assert_same(mlax.jit(lambda x: block(mnp, mlax, x), backend=backend)(x), want, rtol=1e-6, atol=2e-7)
    grad = mlax.jit(mlax.grad(lambda x: mnp.sum(block(mnp, mlax, x))), backend=backend)(x)
    assert_same(grad, jax.grad(lambda x: jnp.sum(block(jnp, jax, x)))(x), rtol=1e-5, atol=1e-6)
    assert_same(block(mnp, mlax, x), want, rtol=1e-6, atol=2e-7)  # eagerly (tanh + 1 cancels near -1)


def test_named_call_keeps_the_function_and_its_name() -> None:
    def square(v):
        return v * v

    wrapped = mlax.named_call(square)
    assert wrapped.__name__ == "square" and float(wrapped(3.0)) == 9.0


def test_names_must_be_strings() -> None:
    with pytest.raises(TypeError, match="must be a string"), mlax.named_scope(3):
        pass
