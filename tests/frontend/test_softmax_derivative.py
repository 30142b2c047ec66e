"""mlax.nn.softmax differentiates by jax's rule ``y * (dx - sum(y * dx))`` (jax's custom_jvp):
the same numbers as jax (masks, -inf entries, ties at the maximum, second order, vmap), and
the exponential is computed once in the gradient program, not again for the backward pass."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import mlax
from tests.oracle import assert_same


def _inputs(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = rng.standard_normal((4, 7)).astype(np.float32)
    x[0, :3] = 2.0  # ties at the maximum
    x[1, 0] = -np.inf
    mask = rng.random((4, 7)) > 0.3
    mask[:, 0] = True
    return x, mask, rng.standard_normal((4, 7)).astype(np.float32)


@pytest.mark.parametrize("backend", ["eager", "cpu", "xla"])
@pytest.mark.parametrize(("axis", "masked"), [(-1, False), (0, True), ((0, 1), False)])
def test_gradient_and_jvp_match_jax(backend: str, axis: int | tuple[int, int], masked: bool,
                                    rng: np.random.Generator) -> None:
    x, mask, cotangent = _inputs(rng)
    where = mask if masked else None

    def loss(module: object) -> object:
        return lambda a: (module.nn.softmax(a, axis=axis, where=where) * cotangent).sum()

    grad = mlax.grad(loss(mlax))
    expected = jax.grad(loss(jax))(x)
    assert_same(grad(x) if backend == "eager" else mlax.jit(grad, backend=backend)(x), expected,
                rtol=1e-6, atol=1e-6)
    _, tangent = mlax.jvp(lambda a: mlax.nn.softmax(a, axis=axis, where=where), (x,), (cotangent,))
    _, expected_tangent = jax.jvp(lambda a: jax.nn.softmax(a, axis=axis, where=where), (x,), (cotangent,))
    assert_same(tangent, expected_tangent, rtol=1e-6, atol=1e-6)


def test_second_order_and_vmap_match_jax(rng: np.random.Generator) -> None:
    x, _, cotangent = _inputs(rng)

    def loss(module: object) -> object:
        return lambda a: (module.nn.softmax(a) * cotangent[0]).sum()

    assert_same(mlax.jit(mlax.hessian(loss(mlax)))(x[2]), jax.hessian(loss(jax))(x[2]), rtol=1e-5, atol=1e-6)
    assert_same(mlax.vmap(mlax.grad(loss(mlax)))(x), jax.vmap(jax.grad(loss(jax)))(x), rtol=1e-6, atol=1e-6)


def test_gradient_computes_the_exponential_once() -> None:
    x = np.ones((8, 16), np.float32)
    step = mlax.jit(mlax.grad(lambda a: (mlax.nn.softmax(a) ** 2).sum()), backend="xla")
    assert step.lower(x).as_text("stablehlo").count("stablehlo.exponential") == 1
