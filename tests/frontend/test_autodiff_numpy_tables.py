"""Derivatives of the mlax.numpy functions of the numpy test tables (elementwise unary and
binary, manipulation, reductions, products, einsum): jvp and vjp against jax on float32 inputs
inside every function's domain. Functions whose outputs are not floats have no derivative
and are left out of the parameter lists."""

from __future__ import annotations

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.numpy.test_elementwise import BINARY, UNARY
from tests.numpy.test_linalg import EINSUM, PRODUCT_SHAPES
from tests.numpy.test_manipulation import CASES
from tests.numpy.test_reductions import CUMULATIVE, REDUCTIONS, SINGLE_AXIS
from tests.oracle import assert_same, random_array

NOT_DIFFERENTIABLE_IN_JAX = {"nextafter", "real", "imag", "conj", "conjugate", "isreal", "iscomplex"}
INTEGER_ONLY = {"bitwise_count", "bitwise_not", "invert", "bitwise_invert", "bitwise_and", "bitwise_or",
                "bitwise_xor", "left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift"}
LEFT_OUT = NOT_DIFFERENTIABLE_IN_JAX | INTEGER_ONLY


def _float_outputs(jax_fn: Any, args: tuple[Any, ...]) -> bool:
    leaves = jax.tree_util.tree_leaves(jax.eval_shape(jax_fn, *args))
    return bool(leaves) and all(jnp.issubdtype(leaf.dtype, jnp.floating) for leaf in leaves)


def _float_valued(jax_fn: Any, shapes: Any) -> bool:
    """Whether ``jax_fn`` of float32 arguments of ``shapes`` has float outputs only (jax.eval_shape
    at collection: no compile). Functions that have not (predicates, comparisons, integer
    results) have no derivative and are left out of the parameter lists."""
    return _float_outputs(jax_fn, tuple(jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes))


def _compare(fn: Any, jax_fn: Any, args: tuple[Any, ...], rng: np.random.Generator) -> None:
    """jvp and vjp against jax's, eagerly (the default backend) and as one program on XLA."""
    assert _float_outputs(jax_fn, args), "a case without float outputs belongs out of the parameters"
    tangents = tuple(random_array(rng, np.shape(a), np.float32) for a in args)
    expected = jax.jvp(jax_fn, args, tangents)
    assert_same(mlax.jvp(fn, args, tangents), expected, rtol=5e-5, atol=1e-5, check_weak_type=False)
    on_xla = mlax.jit(lambda a, t: mlax.jvp(fn, a, t), backend="xla")(args, tangents)
    assert_same(on_xla, expected, rtol=5e-5, atol=1e-5, check_weak_type=False)
    _, pull = mlax.vjp(fn, *args)
    jout, jpull = jax.vjp(jax_fn, *args)
    cotangent = jax.tree_util.tree_map(
        lambda o: random_array(rng, np.shape(o), np.float32).astype(o.dtype), jout)
    assert_same(pull(cotangent), jpull(cotangent), rtol=5e-5, atol=1e-5, check_weak_type=False)
    on_xla = mlax.jit(lambda a, c: mlax.vjp(fn, *a)[1](c), backend="xla")(args, cotangent)
    assert_same(on_xla, jpull(cotangent), rtol=5e-5, atol=1e-5, check_weak_type=False)


@pytest.mark.parametrize("name", [n for n in sorted(set(UNARY) - LEFT_OUT)
                                  if _float_valued(UNARY[n], [(2, 3)])])
def test_unary(name: str, rng: np.random.Generator) -> None:
    low, high = (1.2, 2.0) if name == "arccosh" else (0.2, 0.8)
    x = random_array(rng, (2, 3), np.float32, low, high)
    _compare(getattr(mnp, name), UNARY[name], (x,), rng)


@pytest.mark.parametrize("name", [n for n in sorted(set(BINARY) - LEFT_OUT)
                                  if _float_valued(BINARY[n], [(3, 2), (3, 2)])])
def test_binary(name: str, rng: np.random.Generator) -> None:
    x, y = (random_array(rng, (3, 2), np.float32, 0.3, 1.5) for _ in range(2))
    _compare(getattr(mnp, name), BINARY[name], (x, y), rng)


@pytest.mark.parametrize("name", [n for n in sorted(CASES) if _float_valued(CASES[n][0](jnp), CASES[n][1])])
def test_manipulation(name: str, rng: np.random.Generator) -> None:
    build, shapes = CASES[name][0], CASES[name][1]
    args = tuple(random_array(rng, s, np.float32) for s in shapes)
    _compare(build(mnp), build(jnp), args, rng)


# Cumulative and single-axis reductions take one axis: left out of the tuple-of-axes case.
REDUCTION_CASES = [(name, axis) for name in sorted(set(REDUCTIONS) | set(CUMULATIVE))
                   for axis in (None, 1, (0, 2))
                   if not (isinstance(axis, tuple) and (name in CUMULATIVE or name in SINGLE_AXIS))
                   and _float_valued(partial(getattr(jnp, name), axis=axis), [(2, 3, 4)])]


@pytest.mark.parametrize("name,axis", REDUCTION_CASES)
def test_reductions(name: str, axis: Any, rng: np.random.Generator) -> None:
    x = random_array(rng, (2, 3, 4), np.float32, 0.5, 1.5) * np.sign(random_array(rng, (2, 3, 4), np.float32))
    ours, theirs = getattr(mnp, name), getattr(jnp, name)
    _compare(lambda x: ours(x, axis=axis), lambda x: theirs(x, axis=axis), (x,), rng)


PRODUCTS = [(name, k) for name, shapes in PRODUCT_SHAPES.items() for k in range(len(shapes))]


@pytest.mark.parametrize("name,k", PRODUCTS)
def test_products(name: str, k: int, rng: np.random.Generator) -> None:
    args = tuple(random_array(rng, s, np.float32) for s in PRODUCT_SHAPES[name][k])
    _compare(getattr(mnp, name), getattr(jnp, name), args, rng)


@pytest.mark.parametrize("spec,shapes", EINSUM)
def test_einsum(spec: str, shapes: list[tuple[int, ...]], rng: np.random.Generator) -> None:
    args = tuple(random_array(rng, s, np.float32) for s in shapes)
    _compare(lambda *a: mnp.einsum(spec, *a), lambda *a: jnp.einsum(spec, *a), args, rng)
