"""vmap keeps custom derivatives: grad/jvp/jacfwd of a vmapped custom_jvp or custom_vjp function
use the user's rule (batched), as in jax, with batched and unbatched (in_axes None) operands,
several outputs, residuals, nested vmaps, symbolic zeros, under jit on every backend; and the
activations whose jax derivative is a custom rule (relu at 0, relu6 at its corners)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.frontend.conftest import BACKENDS
from tests.oracle import assert_same

TOL = dict(rtol=1e-5, atol=1e-6)


def _custom_jvp(lib: Any, np_lib: Any) -> Any:
    """f(x, w) = (sin(x) * w, x * x) with a deliberately different rule (not sin's derivative)."""
    @lib.custom_jvp
    def f(x: Any, w: Any) -> Any:
        return np_lib.sin(x) * w, x * x

    @f.defjvp
    def rule(primals: Any, tangents: Any) -> Any:
        (x, w), (dx, dw) = primals, tangents
        return f(x, w), (3.0 * dx * w + np_lib.sin(x) * dw, 5.0 * dx)

    return f


def _custom_vjp(lib: Any, np_lib: Any) -> Any:
    """g(x, w) = sin(x) * w with residuals and a rule of its own: d/dx -> 7 * w, d/dw -> x."""
    @lib.custom_vjp
    def g(x: Any, w: Any) -> Any:
        return np_lib.sin(x) * w

    def fwd(x: Any, w: Any) -> Any:
        return g(x, w), (x, w)

    def bwd(residuals: Any, ct: Any) -> Any:
        x, w = residuals
        return 7.0 * w * ct, x * ct

    g.defvjp(fwd, bwd)
    return g


def _loss(lib: Any, np_lib: Any, in_axes: Any) -> Any:
    f, g = _custom_jvp(lib, np_lib), _custom_vjp(lib, np_lib)

    def loss(x: Any, w: Any) -> Any:
        a, b = lib.vmap(f, in_axes=in_axes)(x, w)
        c = lib.vmap(g, in_axes=in_axes)(x, w)
        return (a * 2 + b).sum() + (c * c).sum()

    return loss


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0), (1, 0)])
def test_grad_of_vmap_uses_the_rules(rng: np.random.Generator, in_axes: Any) -> None:
    shapes = {0: (4, 3), 1: (3, 4), None: (3,)}
    x = rng.normal(size=shapes[in_axes[0]]).astype(np.float32)
    w = rng.normal(size=shapes[in_axes[1]] if in_axes[1] is not None else (3,)).astype(np.float32)
    if in_axes == (1, 0):
        w = rng.normal(size=(4, 3)).astype(np.float32)
    expected = jax.grad(_loss(jax, jnp, in_axes), argnums=(0, 1))(x, w)
    assert_same(mlax.grad(_loss(mlax, mnp, in_axes), argnums=(0, 1))(x, w), expected, **TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_under_jit_jvp_and_jacfwd(backend: str, rng: np.random.Generator) -> None:
    x, w = rng.normal(size=(5, 2)).astype(np.float32), rng.normal(size=(5, 2)).astype(np.float32)
    loss_m, loss_j = _loss(mlax, mnp, (0, 0)), _loss(jax, jnp, (0, 0))
    assert_same(mlax.jit(mlax.grad(loss_m, argnums=(0, 1)), backend=backend)(x, w),
                jax.grad(loss_j, argnums=(0, 1))(x, w), **TOL)
    f_m, f_j = _custom_jvp(mlax, mnp), _custom_jvp(jax, jnp)
    assert_same(mlax.jvp(mlax.vmap(f_m), (x, w), (w, x)), jax.jvp(jax.vmap(f_j), (x, w), (w, x)), **TOL)
    expected = jax.jacfwd(lambda v: jax.vmap(f_j)(v, w)[0])(x)
    assert_same(mlax.jacfwd(lambda v: mlax.vmap(f_m)(v, w)[0])(x), expected, **TOL)


def test_nested_vmap_and_vmap_of_grad(rng: np.random.Generator) -> None:
    x, w = rng.normal(size=(2, 3, 4)).astype(np.float32), rng.normal(size=(4,)).astype(np.float32)

    def nested(lib: Any, np_lib: Any) -> Any:
        g = _custom_vjp(lib, np_lib)
        return lambda v: lib.vmap(lib.vmap(g, in_axes=(0, None)), in_axes=(0, None))(v, w).sum()

    assert_same(mlax.grad(nested(mlax, mnp))(x), jax.grad(nested(jax, jnp))(x), **TOL)
    g_m, g_j = _custom_vjp(mlax, mnp), _custom_vjp(jax, jnp)
    assert_same(mlax.vmap(mlax.grad(lambda v: g_m(v, w).sum()))(x[0]),
                jax.vmap(jax.grad(lambda v: g_j(v, w).sum()))(x[0]), **TOL)


def test_symbolic_zeros_rule_under_vmap(rng: np.random.Generator) -> None:
    """A symbolic_zeros rule batched: the unperturbed argument's tangent arrives as zeros."""
    def make(lib: Any, np_lib: Any) -> Any:
        @lib.custom_jvp
        def f(x: Any, y: Any) -> Any:
            return x * y

        def rule(primals: Any, tangents: Any) -> Any:
            (x, y), (dx, dy) = primals, tangents
            zero = type(dy).__name__ == "SymbolicZero"
            return f(x, y), 4.0 * dx * y + (0.0 if zero else dy * x)

        f.defjvp(rule, symbolic_zeros=True)
        return lambda x, y: lib.vmap(f, in_axes=(0, None))(x, y).sum()

    x, y = rng.normal(size=(3,)).astype(np.float32), np.float32(1.5)
    assert_same(mlax.grad(make(mlax, mnp))(x, y), jax.grad(make(jax, jnp))(x, y), **TOL)


@pytest.mark.parametrize("name", ["relu", "relu6"])
def test_activation_rules_at_their_corners(name: str) -> None:
    x = np.array([0.0, 1.0, -1.0, 6.0, 3.0, 7.0], np.float32)
    ours, theirs = getattr(mlax.nn, name), getattr(jax.nn, name)
    expected = jax.vmap(jax.grad(theirs))(x)
    assert_same(mlax.vmap(mlax.grad(ours))(x), expected)
    assert_same(mlax.grad(lambda v: mlax.vmap(ours)(v).sum())(x), expected)
    assert_same(mlax.jit(mlax.grad(lambda v: ours(v).sum()))(x), expected)
    assert_same(ours(np.int32(3)), theirs(np.int32(3)))
