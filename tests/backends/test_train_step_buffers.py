"""Training steps on the CPU backend: the buffers a step's gemms write (no shared zero fill
copied, no fill that beta = 0 replaces, weight gradients computed untransposed) and the
numbers, compared with jax on random values, gradients included."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import mlax
import mlax.numpy as mnp
from tests.oracle import random_array


def _mlp_step(lib, np_):
    """value_and_grad of a 3-layer tanh MLP's squared error, then one SGD update."""
    def loss(params, x, y):
        for w, b in params[:-1]:
            x = np_.tanh(x @ w + b)
        w, b = params[-1]
        return np_.mean((x @ w + b - y) ** 2)

    def step(params, x, y):
        value, grads = lib.value_and_grad(loss)(params, x, y)
        return value, lib.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), grads
    return step


def _mlp_inputs(rng: np.random.Generator):
    sizes = (12, 20, 16, 20, 5)
    params = [(random_array(rng, (n, m), np.float32) * 0.4, random_array(rng, (m,), np.float32))
              for n, m in zip(sizes[:-1], sizes[1:], strict=True)]
    return params, random_array(rng, (9, 12), np.float32), random_array(rng, (9, 5), np.float32)


def test_mlp_step_agrees_with_jax(rng: np.random.Generator) -> None:
    args = _mlp_inputs(rng)
    got = mlax.jit(_mlp_step(mlax, mnp))(*args)
    expected = jax.jit(_mlp_step(jax, jnp))(*args)
    for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-4, atol=1e-5)


def test_mlp_step_copies_no_buffer(rng: np.random.Generator) -> None:
    """Every gemm gets its own output (mlax-private-fills), written by BLAS with beta = 0 (the
    zero fills erased), and each weight gradient is the product x^T g itself, so the update
    reads it by rows (no map reading a matrix transposed)."""
    text = mlax.jit(_mlp_step(mlax, mnp)).lower(*_mlp_inputs(rng)).as_text("buffers", debug_info=False)
    assert "memref.copy" not in text
    assert "affine_map<(d0, d1) -> (d1, d0)>" not in text
    lines = text.splitlines()
    zeros = {line.split(" = ")[0].strip() for line in lines if "arith.constant 0.000000e+00 : f32" in line}
    betas = [line.split("call @mlax_sgemm(")[1].split(")")[0].split(", ")[11]
             for line in lines if "call @mlax_sgemm" in line]
    assert len(betas) == 11  # 4 forward, 4 weight gradients, 3 input gradients
    assert set(betas) <= zeros


def test_batched_transposed_products_agree_with_jax(rng: np.random.Generator) -> None:
    """Gradients of batched products (attention's shape): the transposes of batch_matmuls
    that reverse mode writes become batch_matmuls of the exchanged operands."""
    def loss(np_):
        def f(q, k, v):
            scores = np_.tanh(np_.einsum("bqd,bkd->bqk", q, k))
            return np_.sum(np_.einsum("bqk,bkd->bqd", scores, v) ** 2)
        return f

    q, k, v = (random_array(rng, (3, n, 6), np.float32) * 0.3 for n in (4, 7, 7))
    got = mlax.jit(mlax.grad(loss(mnp), argnums=(0, 1, 2)))(q, k, v)
    expected = jax.jit(jax.grad(loss(jnp), argnums=(0, 1, 2)))(q, k, v)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-4, atol=1e-5)


def test_products_accumulated_in_a_scan_agree_with_jax(rng: np.random.Generator) -> None:
    """A zero init shared by a loop's carry and products outside it: each gets its own fill."""
    def f(lib, np_):
        def run(h0, xs, w):
            def body(h, x):
                h = np_.tanh(h @ w + x)
                return h, h @ w
            h, ys = lib.lax.scan(body, h0, xs)
            return np_.sum(h) + np_.sum(ys ** 2) + np_.sum(h0 @ w)
        return lib.value_and_grad(run, argnums=(0, 2))

    h0, xs, w = (random_array(rng, s, np.float32) * 0.5 for s in ((4, 6), (5, 4, 6), (6, 6)))
    got = mlax.jit(f(mlax, mnp))(h0, xs, w)
    expected = jax.jit(f(jax, jnp))(h0, xs, w)
    for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-4, atol=1e-5)
