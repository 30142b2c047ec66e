"""The programs and helpers both device checks share (backends/xla/device_check.py for StableHLO
on XLA, backends/gpu/device_check.py for mlax's native GPU artifacts).

Each program is written once against a namespace ``m`` (``m.numpy``, ``m.lax``, ``m.nn``, ``m.grad``): mlax
where the artifacts are prepared, jax on the device machine. This file imports only NumPy, so it
travels with the check scripts to machines without mlax.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np


def elementwise(m: Any, x: Any) -> Any:
    xp = m.numpy
    return xp.tanh(x) * xp.exp(-x * x) + 0.5 * x


def softmax(m: Any, x: Any) -> Any:
    xp = m.numpy
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def matmul(m: Any, a: Any, b: Any) -> Any:
    return a @ b


def mlp(m: Any, w1: Any, b1: Any, w2: Any, b2: Any, x: Any) -> Any:
    xp = m.numpy
    return xp.tanh(x @ w1 + b1) @ w2 + b2


def mlp_step(m: Any, w1: Any, b1: Any, w2: Any, b2: Any, x: Any, y: Any) -> Any:
    def loss(params: Any) -> Any:
        return m.numpy.mean((mlp(m, *params, x) - y) ** 2)

    params = (w1, b1, w2, b2)
    grads = m.grad(loss)(params)
    return tuple(p - 0.1 * g for p, g in zip(params, grads, strict=True))


def scan(m: Any, h: Any, xs: Any, w: Any, u: Any) -> Any:
    xp = m.numpy

    def step(h: Any, x: Any) -> Any:
        h = xp.tanh(h @ w + x @ u)
        return h, xp.sum(h)

    return m.lax.scan(step, h, xs)


def _layer_norm(m: Any, x: Any, scale: Any) -> Any:
    xp = m.numpy
    mean = xp.mean(x, axis=-1, keepdims=True)
    var = xp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * m.lax.rsqrt(var + 1e-5) * scale


def _decoder_block(m: Any, params: Any, x: Any, causal: Any, heads: int) -> Any:
    """A pre-norm causal self-attention block with a GELU MLP (x: batch, sequence, width;
    ``causal``: sequence x sequence booleans)."""
    xp = m.numpy
    ln1, wqkv, wo, ln2, w1, w2 = params
    batch, length, width = x.shape
    q, k, v = xp.split(_layer_norm(m, x, ln1) @ wqkv, 3, axis=-1)
    q, k, v = (a.reshape(batch, length, heads, width // heads) for a in (q, k, v))
    logits = xp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(width // heads)
    attention = m.nn.softmax(xp.where(causal, logits, -1e9), axis=-1)
    mixed = xp.einsum("bhqk,bkhd->bqhd", attention, v).reshape(batch, length, width)
    x = x + mixed @ wo
    return x + m.nn.gelu(_layer_norm(m, x, ln2) @ w1) @ w2


def transformer_step(m: Any, ln1: Any, wqkv: Any, wo: Any, ln2: Any, w1: Any, w2: Any, x: Any,
                     y: Any, causal: Any) -> Any:
    """One SGD step of a decoder block on a regression loss: attention softmax, layer norm and
    GELU with their derivatives (the transformer steps of the performance issue). The causal
    mask is an argument: mlax folds a NumPy constant broadcast against a traced value into a
    full-size constant (jax stages the broadcast), which this check does not measure."""
    def loss(params: Any) -> Any:
        return m.numpy.mean((_decoder_block(m, params, x, causal, heads=8) - y) ** 2)

    params = (ln1, wqkv, wo, ln2, w1, w2)
    grads = m.grad(loss)(params)
    return tuple(p - 0.1 * g for p, g in zip(params, grads, strict=True))


def transformer_scan_step(m: Any, ln1: Any, wqkv: Any, wo: Any, ln2: Any, w1: Any, w2: Any, x: Any,
                          y: Any, causal: Any) -> Any:
    """One SGD step of a stack of decoder blocks run by ``lax.scan`` over the layers (each
    parameter has a leading layer axis): the reverse scan's residuals are what it measures."""
    def loss(params: Any) -> Any:
        def layer(h: Any, p: Any) -> Any:
            return _decoder_block(m, p, h, causal, heads=8), None

        out, _ = m.lax.scan(layer, x, params)
        return m.numpy.mean((out - y) ** 2)

    params = (ln1, wqkv, wo, ln2, w1, w2)
    grads = m.grad(loss)(params)
    return tuple(p - 0.1 * g for p, g in zip(params, grads, strict=True))


def leaves(tree: Any) -> list[np.ndarray]:
    """A program's results (nested tuples of arrays) as a flat list of NumPy arrays."""
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in leaves(item)]
    return [np.asarray(tree)]


def median_seconds(call: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times))
