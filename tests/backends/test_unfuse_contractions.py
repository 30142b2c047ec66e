"""mlax-unfuse-contractions on real programs: layers run by `lax.scan` (whose activations have
one use each, so elementwise fusion used to pull layer norms and activations into the
products) keep every product a BLAS gemm, and compute jax's numbers, gradients included."""

from __future__ import annotations

import re
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp


def _stack(np_: Any, lax: Any, params: Any, x: Any) -> Any:
    """Layers ``x + gelu(layer_norm(x) @ w1) @ w2`` over the stacked parameters, by scan."""
    def layer(h: Any, p: Any) -> tuple[Any, None]:
        scale, w1, w2 = p
        mean = np_.mean(h, axis=-1, keepdims=True)
        var = np_.mean((h - mean) ** 2, axis=-1, keepdims=True)
        normed = (h - mean) / np_.sqrt(var + 1e-5) * scale
        hidden = np_.tanh(normed @ w1)  # a fused activation feeds the second product
        return h + (hidden * hidden) @ w2, None

    out, _ = lax.scan(layer, x, params)
    return out


def _loss(np_: Any, lax: Any) -> Any:
    return lambda params, x: np_.mean(_stack(np_, lax, params, x) ** 2)


def _inputs(seed: int, layers: int = 3, batch: int = 2, length: int = 16, width: int = 24) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    params = (1 + 0.1 * rng.standard_normal((layers, width), np.float32),
              rng.standard_normal((layers, width, 2 * width), np.float32) / np.sqrt(width),
              rng.standard_normal((layers, 2 * width, width), np.float32) / np.sqrt(2 * width))
    return params, rng.standard_normal((batch, length, width), np.float32)


def test_products_in_scanned_layers_stay_gemms() -> None:
    params, x = _inputs(0)
    text = mlax.jit(mlax.grad(_loss(mnp, mlax.lax))).lower(params, x).as_text("buffers")
    # forward 2 per layer, backward 4 per layer (x^T g and g w^T for each weight)
    assert len(re.findall(r"call @mlax_sgemm", text)) >= 6, text
    for generic in re.findall(r"linalg\.generic \{[^\n]*reduction[^\n]*\n(?:[^\n]*\n){1,3}", text):
        assert "math.tanh" not in generic and "rsqrt" not in generic, generic


@pytest.mark.parametrize("seed", [0, 1])
def test_scanned_layers_match_jax(seed: int) -> None:
    params, x = _inputs(seed)
    got = mlax.jit(mlax.value_and_grad(_loss(mnp, mlax.lax)))(params, x)
    want = jax.jit(jax.value_and_grad(_loss(jnp, jax.lax)))(params, x)
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=2e-6)


def test_gradient_against_finite_differences() -> None:
    params, x = _inputs(2, layers=2, length=4, width=8)
    params, x = tuple(p.astype(np.float64) for p in params), x.astype(np.float64)
    direction = tuple(np.random.default_rng(3).standard_normal(p.shape) for p in params)
    loss, eps = _loss(mnp, mlax.lax), 1e-6
    with mlax.enable_x64(True):
        grads = mlax.jit(mlax.grad(loss))(params, x)
        shifted = [loss(tuple(p + sign * eps * d for p, d in zip(params, direction, strict=True)), x)
                   for sign in (1, -1)]
    numeric = (float(shifted[0]) - float(shifted[1])) / (2 * eps)
    analytic = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(grads, direction, strict=True))
    assert analytic == pytest.approx(numeric, rel=1e-6)
