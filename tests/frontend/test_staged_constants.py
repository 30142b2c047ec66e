"""Ops on constants under a trace are staged, as jax stages them: ``make_jaxpr`` shows the op
on its literal, the result is a tracer, and the compiled program's numbers are the eager op's
within an ulp. The conversions and broadcasts the numpy layer applies to Python scalars stay folded, and
``ensure_compile_time_eval`` still evaluates."""

from __future__ import annotations

from collections import Counter
from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mlax
import mlax.numpy as jnp

RNG = np.random.default_rng(7)


def _primitives(closed: Any) -> Counter[str]:
    return Counter(str(eqn.primitive) for eqn in closed.jaxpr.eqns)


@pytest.mark.parametrize("name", ["log", "exp", "sin", "sqrt", "tanh"])
def test_unary_op_on_a_constant_is_an_equation(name: str) -> None:
    c = float(RNG.uniform(0.5, 3.0))
    x = RNG.normal(size=(4,)).astype(np.float32)
    ours = mlax.make_jaxpr(lambda x: x * getattr(jnp, name)(c))(x)
    theirs = jax.make_jaxpr(lambda x: x * getattr(jjnp, name)(c))(x)
    assert _primitives(ours)[name] == _primitives(theirs)[name] == 1
    f = lambda m: lambda x: x * getattr(m, name)(c)  # noqa: E731
    np.testing.assert_allclose(mlax.jit(f(jnp))(x), jax.jit(f(jjnp))(x), rtol=1e-6)


def test_reduction_of_a_constant_is_a_tracer() -> None:
    seen = {}

    def f(lib: Any, tracer_type: type, x: Any) -> Any:
        size = lib.array(x.shape).prod()
        seen[lib] = isinstance(size, tracer_type)
        return x * size

    x = RNG.normal(size=(2, 3)).astype(np.float32)
    np.testing.assert_allclose(mlax.jit(lambda x: f(jnp, mlax.core.Tracer, x))(x),
                               jax.jit(lambda x: f(jjnp, jax.core.Tracer, x))(x), rtol=1e-6)
    assert seen == {jnp: True, jjnp: True}


def test_comparison_of_closed_over_constants_is_a_tracer() -> None:
    a = RNG.normal(size=(3,)).astype(np.float32)
    b = a.copy()
    b[1] += 1.0

    def f(lib: Any, tracer_type: type) -> Any:
        out = lib.all(lib.asarray(a) == lib.asarray(b))
        assert isinstance(out, tracer_type)
        return out

    ours, theirs = mlax.jit(lambda: f(jnp, mlax.core.Tracer))(), jax.jit(lambda: f(jjnp, jax.core.Tracer))()
    assert bool(ours) is bool(theirs) is False
    assert ours.dtype == theirs.dtype


def test_scalar_conversions_stay_literals() -> None:
    x = RNG.normal(size=(3,)).astype(np.float32)
    closed = mlax.make_jaxpr(lambda x: x * 3 + 2.0)(x)
    assert _primitives(closed) == Counter({"mul": 1, "add": 1})


def test_ensure_compile_time_eval_evaluates() -> None:
    def f(x: Any) -> Any:
        with mlax.ensure_compile_time_eval():
            c = jnp.log(jnp.asarray(2.0))
            assert not isinstance(c, mlax.core.Tracer)
        return x * c

    assert _primitives(mlax.make_jaxpr(f)(np.float32(1.0))) == Counter({"mul": 1})


def test_staged_constant_ops_match_eager_and_jax() -> None:
    """The compiled program computes them, as jax's does: within an ulp of the eager op."""
    c = RNG.uniform(0.1, 2.0, size=(5,)).astype(np.float32)

    def f(lib: Any, x: Any) -> Any:
        return x + lib.log1p(lib.asarray(c)) * lib.cos(lib.asarray(c)).sum()

    x = RNG.normal(size=(5,)).astype(np.float32)
    eager = np.asarray(f(jnp, jnp.asarray(x)))
    np.testing.assert_allclose(np.asarray(mlax.jit(lambda x: f(jnp, x))(x)), eager, rtol=4e-7, atol=1e-7)
    np.testing.assert_allclose(eager, jax.jit(lambda x: f(jjnp, x))(x), rtol=1e-6)
