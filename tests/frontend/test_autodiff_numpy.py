"""Gradients of mlax.numpy / mlax.nn functions against jax (vjp of a random cotangent, and
jvp), on random float32 inputs away from kinks."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import assert_same, random_array

# name -> (function of a NumPy-like module, input shapes, (low, high))
CASES = {
    "sum_axis": (lambda np_: lambda x: np_.sum(x, axis=0), [(3, 4)], (-2, 2)),
    "mean": (lambda np_: lambda x: np_.mean(x, axis=1, keepdims=True), [(3, 4)], (-2, 2)),
    "var": (lambda np_: lambda x: np_.var(x), [(3, 4)], (-2, 2)),
    "std": (lambda np_: lambda x: np_.std(x, axis=0), [(3, 4)], (-2, 2)),
    "max": (lambda np_: lambda x: np_.max(x, axis=1), [(3, 4)], (-2, 2)),
    "prod": (lambda np_: lambda x: np_.prod(x, axis=0), [(3, 4)], (0.5, 2)),
    "cumsum": (lambda np_: lambda x: np_.cumsum(x, axis=1), [(3, 4)], (-2, 2)),
    "matmul": (lambda np_: lambda a, b: a @ b, [(3, 4), (4, 2)], (-2, 2)),
    "batched_matmul": (lambda np_: lambda a, b: np_.matmul(a, b), [(2, 3, 4), (2, 4, 5)], (-2, 2)),
    "dot": (lambda np_: lambda a, b: np_.dot(a, b), [(4,), (4,)], (-2, 2)),
    "einsum": (lambda np_: lambda a, b: np_.einsum("ij,jk->ik", a, b), [(2, 3), (3, 4)], (-2, 2)),
    "outer": (lambda np_: lambda a, b: np_.outer(a, b), [(3,), (2,)], (-2, 2)),
    "transpose_reshape": (lambda np_: lambda x: np_.transpose(x).reshape(2, 6), [(3, 4)], (-2, 2)),
    "concatenate": (lambda np_: lambda a, b: np_.concatenate([a, b], axis=0), [(2, 3), (1, 3)], (-2, 2)),
    "stack": (lambda np_: lambda a, b: np_.stack([a, b], axis=1), [(2, 3), (2, 3)], (-2, 2)),
    "where": (lambda np_: lambda x: np_.where(x > 0, np_.sin(x), x * x), [(3, 4)], (-2, 2)),
    "clip": (lambda np_: lambda x: np_.clip(x, -0.5, 0.7), [(3, 4)], (-2, 2)),
    "power": (lambda np_: lambda x, y: np_.power(x, y), [(3,), (3,)], (0.5, 2)),
    "sqrt_abs": (lambda np_: lambda x: np_.sqrt(np_.abs(x)), [(3, 4)], (0.2, 2)),
    "log_softmax": (lambda np_: lambda x: x - np_.log(np_.sum(np_.exp(x), axis=1, keepdims=True)),
                    [(3, 4)], (-2, 2)),
    "indexing": (lambda np_: lambda x: x[1:, ::2] * x[0, 1], [(3, 4)], (-2, 2)),
    "broadcasting": (lambda np_: lambda a, b: a * b + a, [(3, 1), (1, 4)], (-2, 2)),
    "hypot_rows": (lambda np_: lambda x: np_.sqrt(np_.sum(x * x, axis=1)), [(3, 4)], (0.5, 2)),
    "flip_roll": (lambda np_: lambda x: np_.roll(np_.flip(x, axis=0), 1, axis=1), [(3, 4)], (-2, 2)),
    "pad": (lambda np_: lambda x: np_.pad(x, ((1, 0), (0, 2))), [(3, 4)], (-2, 2)),
    "tanh_mlp": (lambda np_: lambda x, w: np_.tanh(x @ w).sum(axis=0), [(4, 3), (3, 2)], (-1, 1)),
}


def _nn(np_):
    import mlax.nn as mnn
    return mnn if np_ is mnp else jax.nn


NN = {
    "softmax": lambda nn: lambda x: nn.softmax(x, axis=-1),
    "relu": lambda nn: lambda x: nn.relu(x),
    "gelu": lambda nn: lambda x: nn.gelu(x),
    "sigmoid": lambda nn: lambda x: nn.sigmoid(x),
    "logsumexp": lambda nn: lambda x: nn.logsumexp(x, axis=1),
}


def _compare(fn, jax_fn, args, rng: np.random.Generator) -> None:
    tangents = tuple(random_array(rng, np.shape(a), np.float32) for a in args)
    assert_same(mlax.jvp(fn, args, tangents), jax.jvp(jax_fn, args, tangents), rtol=5e-5, atol=1e-5)
    out, pull = mlax.vjp(fn, *args)
    jout, jpull = jax.vjp(jax_fn, *args)
    cotangent = random_array(rng, np.shape(jout), np.float32)
    assert_same(pull(cotangent), jpull(cotangent), rtol=5e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_functions(name: str, rng: np.random.Generator) -> None:
    build, shapes, (low, high) = CASES[name]
    args = tuple(random_array(rng, s, np.float32, low, high) for s in shapes)
    _compare(build(mnp), build(jnp), args, rng)


@pytest.mark.parametrize("name", sorted(NN))
def test_nn_functions(name: str, rng: np.random.Generator) -> None:
    x = random_array(rng, (3, 4), np.float32, 0.1, 2.0) * np.sign(random_array(rng, (3, 4), np.float32))
    _compare(NN[name](_nn(mnp)), NN[name](_nn(jnp)), (x,), rng)
