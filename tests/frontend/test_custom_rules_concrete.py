"""Custom derivative functions under eager transformations see concrete primal values, as in
jax (its custom_derivatives page: ``if x > 0`` in a custom_jvp function and in its rule)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import mlax

RNG = np.random.default_rng(7)
POINTS = [float(v) for v in RNG.normal(size=4) * 2] + [-0.0, 0.0]


def _branching_jvp(m: Any) -> Any:
    """The page's custom_jvp whose function and rule branch on the primal."""
    jnp = m.numpy

    @m.custom_jvp
    def f(x: Any) -> Any:
        return jnp.sin(x) if x > 0 else jnp.cos(x)

    @f.defjvp
    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (x_dot,) = primals, tangents
        return f(x), (2 * x_dot if x > 0 else 3 * x_dot)

    return f


def _branching_vjp(m: Any) -> Any:
    """A custom_vjp whose function and fwd branch on the primal's value (jax's eager grad
    hands fwd concrete values, and fwd calls the function on them)."""
    jnp = m.numpy

    @m.custom_vjp
    def g(x: Any) -> Any:
        return jnp.exp(x) if int(x > 1) else x * x

    def g_fwd(x: Any) -> Any:
        return g(x), (jnp.exp(x) if x > 1 else 2 * x)

    def g_bwd(res: Any, ct: Any) -> Any:
        return (res * ct,)

    g.defvjp(g_fwd, g_bwd)
    return g


@pytest.mark.parametrize("x", POINTS)
def test_custom_jvp_branches_on_values(x: float) -> None:
    ours, theirs = _branching_jvp(mlax), _branching_jvp(jax)
    for transform in ("grad", "value_and_grad"):
        got = getattr(mlax, transform)(ours)(x)
        want = getattr(jax, transform)(theirs)(x)
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=1e-6)
    got_out, got_t = mlax.jvp(ours, (np.float32(x),), (np.float32(1.5),))
    want_out, want_t = jax.jvp(theirs, (np.float32(x),), (np.float32(1.5),))
    np.testing.assert_allclose(np.asarray(got_out), np.asarray(want_out), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got_t), np.asarray(want_t), rtol=1e-6)
    assert np.asarray(got_t).dtype == np.asarray(want_t).dtype


@pytest.mark.parametrize("x", POINTS)
def test_custom_vjp_fwd_branches_on_values(x: float) -> None:
    got = mlax.grad(_branching_vjp(mlax))(x)
    want = jax.grad(_branching_vjp(jax))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert np.asarray(got).dtype == np.asarray(want).dtype


def test_under_jit_the_values_stay_abstract() -> None:
    for lib in (jax, mlax):
        with pytest.raises(jax.errors.TracerBoolConversionError):
            lib.jit(lib.grad(_branching_jvp(lib)))(1.0)
        with pytest.raises(jax.errors.ConcretizationTypeError):
            lib.jit(lib.grad(_branching_vjp(lib)))(1.0)


def test_abstract_rules_trace_once_per_signature() -> None:
    """A function without value-dependent Python keeps the cached abstract trace: its rule is
    traced at the first call only."""
    calls = []

    @mlax.custom_jvp
    def h(x: Any) -> Any:
        return mlax.numpy.tanh(x)

    @h.defjvp
    def h_jvp(primals: Any, tangents: Any) -> Any:
        calls.append(1)
        return h(primals[0]), tangents[0] * 4.0

    grad = mlax.grad(h)
    values = [float(grad(np.float32(v))) for v in RNG.normal(size=3)]
    assert values == [4.0, 4.0, 4.0] and len(calls) == 1
