"""mlax-outline-kernels on real programs: kernels that recur become one function called where
they occur, and every program computes, bit for bit, what it computes with its kernels inline
(every dtype, in loops, in place), and what jax computes."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.backends.cpu import executable


def _inline_too(monkeypatch: pytest.MonkeyPatch, program: Callable[..., Any], *args: Any) -> tuple[Any, Any]:
    """``program`` jitted and run with its kernels outlined, then compiled and run inline."""
    outlined = mlax.jit(program)(*args)
    options = executable.cpu_options()
    monkeypatch.setattr(executable, "cpu_options", lambda: dataclasses.replace(options, outline=False))
    inline = mlax.jit(lambda *a: program(*a))(*args)
    monkeypatch.undo()
    return outlined, inline


def _assert_same(outlined: Any, inline: Any) -> None:
    for a, b in zip(jax.tree_util.tree_leaves(outlined), jax.tree_util.tree_leaves(inline), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _layers(np_, w, x):
    for _ in range(4):
        x = np_.tanh(x @ w) * 0.5 + x
    return x


def test_recurring_kernels_share_one_function(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((32, 32), np.float32) / 6, rng.standard_normal((8, 32), np.float32)
    program = mlax.jit(lambda w, x: _layers(mnp, w, x))
    text = program.lower(w, x).as_text("buffers")
    kernels = re.findall(r"func\.func private @(mlax_kernel_\d+)", text)
    assert max(text.count(f"call @{name}(") for name in kernels) >= 3, text  # the layers after the first
    entry = text.split("func.func @")[1].split("func.func private")[0]
    assert "linalg." not in entry, entry  # every kernel is a function, once-only ones too
    got, inline = _inline_too(monkeypatch, lambda w, x: _layers(mnp, w, x), w, x)
    _assert_same(got, inline)
    want = jax.jit(lambda w, x: _layers(jnp, w, x))(w, x)
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "float16", "bfloat16", "float32", "float64",
                                   "complex64"])
def test_each_dtype_computes_what_jax_does(dtype: str, request: pytest.FixtureRequest,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    if dtype == "float64":
        request.getfixturevalue("x64")
    rng = np.random.default_rng(1)
    values = [rng.standard_normal((6, 5)) * 3 for _ in range(3)]
    if dtype == "bool":
        a, b, c = (v > 0 for v in values)
    elif "complex" in dtype:
        a, b, c = (np.asarray(v + 1j * v[::-1], dtype) for v in values)
    else:
        a, b, c = (np.asarray(v, dtype=jnp.dtype(dtype)) for v in values)

    def f(np_, a, b, c):  # the same kernels on three operands, then on their results
        op = (lambda p, q: p ^ q) if dtype == "bool" else (lambda p, q: p * q + p)
        return op(op(a, b), op(b, c)), op(c, a)

    got, inline = _inline_too(monkeypatch, lambda *t: f(mnp, *t), a, b, c)
    _assert_same(got, inline)
    want = jax.jit(lambda *t: f(jnp, *t))(a, b, c)
    # (the order of roundings and fused multiply-adds differ from XLA's)
    tolerances = {"float16": 1e-2, "bfloat16": 1e-2, "float32": 2e-6, "complex64": 2e-6, "float64": 1e-14}
    tolerance = tolerances.get(dtype, 0)
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tolerance, atol=tolerance)


def test_loops_and_buffers_updated_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    def f(np_, lax, h, xs):
        def step(h, x):
            h = np_.sin(h) * x + h  # the same kernel in the body twice, and after the loop
            h = np_.sin(h) * x + h
            return h, h.sum()
        h, ys = lax.scan(step, h, xs)
        return np_.sin(h) * h + h, ys

    rng = np.random.default_rng(2)
    h, xs = rng.standard_normal(16, np.float32), rng.standard_normal((5, 16), np.float32)
    got, inline = _inline_too(monkeypatch, lambda h, xs: f(mnp, mlax.lax, h, xs), h, xs)
    _assert_same(got, inline)
    want = jax.jit(lambda h, xs: f(jnp, jax.lax, h, xs))(h, xs)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=3e-6, atol=3e-6)
