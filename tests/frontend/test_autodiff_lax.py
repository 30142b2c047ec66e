"""Every differentiable mlax.lax function through the front end: jvp and vjp values against
jax.jvp / jax.vjp on random inputs (float32; points away from kinks and domain edges)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import mlax
from mlax import lax
from tests.oracle import assert_same, random_array

RTOL = 2e-5
# name -> (number of float operands, (low, high) of the inputs)
UNARY = {
    "abs": (0.2, 2.0), "acos": (-0.9, 0.9), "acosh": (1.1, 3.0), "asin": (-0.9, 0.9), "asinh": (-2.0, 2.0),
    "atan": (-2.0, 2.0), "atanh": (-0.9, 0.9), "cbrt": (0.2, 2.0), "cos": (-3.0, 3.0), "cosh": (-2.0, 2.0),
    "erf": (-2.0, 2.0), "erf_inv": (-0.9, 0.9), "erfc": (-2.0, 2.0), "exp": (-2.0, 2.0), "exp2": (-2.0, 2.0),
    "expm1": (-2.0, 2.0), "log": (0.2, 3.0), "log1p": (-0.5, 2.0), "logistic": (-3.0, 3.0),
    "neg": (-2.0, 2.0), "reciprocal": (0.5, 2.0), "rsqrt": (0.2, 3.0), "sin": (-3.0, 3.0),
    "sinh": (-2.0, 2.0),
    "sqrt": (0.2, 3.0), "square": (-2.0, 2.0), "tan": (-1.2, 1.2), "tanh": (-2.0, 2.0),
    "floor": (-2.0, 2.0), "ceil": (-2.0, 2.0), "round": (-2.0, 2.0), "sign": (-2.0, 2.0),
}
BINARY = {"add": (-2.0, 2.0), "sub": (-2.0, 2.0), "mul": (-2.0, 2.0), "div": (0.5, 2.0), "max": (-2.0, 2.0),
          "min": (-2.0, 2.0), "pow": (0.5, 2.0), "atan2": (0.3, 2.0), "rem": (0.5, 2.0)}


def _check(fn, jax_fn, args, rng: np.random.Generator) -> None:
    """jvp and vjp against jax's, eagerly (the default backend) and as one program on XLA."""
    tangents = tuple(random_array(rng, np.shape(a), np.float32) for a in args)
    expected = jax.jvp(jax_fn, args, tangents)
    assert_same(mlax.jvp(fn, args, tangents), expected, rtol=RTOL, atol=1e-6)
    assert_same(mlax.jit(lambda a, t: mlax.jvp(fn, a, t), backend="xla")(args, tangents), expected,
                rtol=RTOL, atol=1e-6)
    out, pull = mlax.vjp(fn, *args)
    jout, jpull = jax.vjp(jax_fn, *args)
    cotangent = random_array(rng, np.shape(jout), np.float32)
    assert_same(out, jout, rtol=RTOL)
    assert_same(pull(cotangent), jpull(cotangent), rtol=RTOL, atol=1e-6)
    assert_same(mlax.jit(lambda a, c: mlax.vjp(fn, *a)[1](c), backend="xla")(args, cotangent),
                jpull(cotangent), rtol=RTOL, atol=1e-6)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name: str, rng: np.random.Generator) -> None:
    low, high = UNARY[name]
    x = random_array(rng, (2, 3), np.float32, low, high)
    _check(getattr(lax, name), getattr(jax.lax, name), (x,), rng)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name: str, rng: np.random.Generator) -> None:
    low, high = BINARY[name]
    x, y = (random_array(rng, (3, 2), np.float32, low, high) for _ in range(2))
    _check(getattr(lax, name), getattr(jax.lax, name), (x, y), rng)


STRUCTURAL = {
    "reduce_sum": (lambda m: lambda x: m.reduce_sum(x, (1,)), (3, 4)),
    "reduce_max": (lambda m: lambda x: m.reduce_max(x, (0,)), (3, 4)),
    "reduce_min": (lambda m: lambda x: m.reduce_min(x, (0, 1)), (3, 4)),
    "reduce_prod": (lambda m: lambda x: m.reduce_prod(x, (1,)), (3, 4)),
    "cumsum": (lambda m: lambda x: m.cumsum(x, axis=1), (3, 4)),
    "cumprod": (lambda m: lambda x: m.cumprod(x, axis=0, reverse=True), (3, 4)),
    "cummax": (lambda m: lambda x: m.cummax(x, axis=1), (3, 4)),
    "transpose": (lambda m: lambda x: m.transpose(x, (1, 0, 2)), (2, 3, 4)),
    "reshape": (lambda m: lambda x: m.reshape(x, (4, 3)), (3, 4)),
    "broadcast_in_dim": (lambda m: lambda x: m.broadcast_in_dim(x, (2, 3, 4), (1, 2)), (3, 4)),
    "slice": (lambda m: lambda x: m.slice(x, (0, 1), (3, 4), (2, 1)), (3, 4)),
    "pad": (lambda m: lambda x: m.pad(x, np.float32(0.5), [(1, -1, 1), (0, 2, 0)]), (3, 4)),
    "rev": (lambda m: lambda x: m.rev(x, (0,)), (3, 4)),
    "concatenate": (lambda m: lambda x: m.concatenate([x, x * 2], 1), (3, 4)),
    "dynamic_slice": (lambda m: lambda x: m.dynamic_slice(x, (1, 2), (2, 2)), (3, 4)),
    "dynamic_update_slice": (lambda m: lambda x: m.dynamic_update_slice(x, x[:1, :2] * 3, (2, 1)), (3, 4)),
    "dot_general": (lambda m: lambda x: m.dot_general(x, x, (((1,), (1,)), ((), ()))), (3, 4)),
    "select": (lambda m: lambda x: m.select(x > 0, x * x, -x), (3, 4)),
    "clamp": (lambda m: lambda x: m.clamp(np.float32(-0.5), x, np.float32(0.7)), (3, 4)),
    "convert": (lambda m: lambda x: m.convert_element_type(x, np.float16), (3, 4)),
    "integer_pow": (lambda m: lambda x: m.integer_pow(x, 3), (3, 4)),
}


@pytest.mark.parametrize("name", sorted(STRUCTURAL))
def test_structural(name: str, rng: np.random.Generator) -> None:
    build, shape = STRUCTURAL[name]
    x = random_array(rng, shape, np.float32, -2.0, 2.0)
    fn, jax_fn = build(lax), build(jax.lax)
    if name == "convert":
        tangent = random_array(rng, shape, np.float32)
        assert_same(mlax.jvp(fn, (x,), (tangent,)), jax.jvp(jax_fn, (x,), (tangent,)), rtol=1e-3)
        return
    _check(fn, jax_fn, (x,), rng)


def test_stop_gradient_and_integer_paths(rng: np.random.Generator) -> None:
    x = random_array(rng, (4,), np.float32)
    f = lambda x: lax.stop_gradient(x) * x + lax.convert_element_type(lax.floor(x), np.int32)  # noqa: E731
    jf = lambda x: jax.lax.stop_gradient(x) * x + jax.lax.convert_element_type(jax.lax.floor(x), np.int32)  # noqa: E731
    g = mlax.grad(lambda x: f(x).sum())(x)
    assert_same(g, jax.grad(lambda x: jf(x).sum())(x), rtol=1e-6)
