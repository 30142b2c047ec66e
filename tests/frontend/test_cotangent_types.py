"""The weak types of grad's and vjp's cotangents follow jax's (pyfront/cotangent_types.py): the
argument's in general, strong through an exported function's VJP and for a complex argument of
a real function differentiated without ``holomorphic``. Random points, compared with jax."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp

RNG = np.random.default_rng(36)


def _same(expected, got) -> None:
    assert type(got).__name__ == "Array"
    assert got.dtype == expected.dtype
    assert got.weak_type == expected.weak_type, (expected, got)
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-5, atol=1e-6)


def _exported(ns):
    """``7 x**3`` exported with jax (three orders of VJP), deserialized by ``ns``."""
    exp = jax.export.export(jax.jit(lambda x: 7 * x ** 3))(jax.ShapeDtypeStruct((), jnp.float32))
    return ns.export.deserialize(exp.serialize(vjp_order=3))


@pytest.mark.parametrize("order", [1, 2, 3])
def test_grad_of_exported_is_strong(order: int) -> None:
    point = float(RNG.uniform(0.1, 2.0))
    results = []
    for ns in (jax, mlax):
        fun = _exported(ns).call
        for _ in range(order):
            fun = ns.grad(fun)
        results.append(fun(point))
    _same(*results)


@pytest.mark.parametrize("body", ["scaled", "plus_argument"])
def test_exported_inside_a_function(body: str) -> None:
    point = float(RNG.uniform(0.1, 2.0))
    results = []
    for ns in (jax, mlax):
        call = _exported(ns).call
        fun = (lambda x, call=call: call(x) * 2.0) if body == "scaled" else (lambda x, call=call: call(x) + x)
        results.append(ns.grad(fun)(point))
        results.append(ns.vjp(call, point)[1](1.0)[0])
    _same(results[0], results[2])
    _same(results[1], results[3])


@pytest.mark.parametrize("name", ["real_imag", "abs", "real"])
def test_complex_argument_real_output_is_strong(name: str) -> None:
    z = complex(*RNG.uniform(-2, 2, 2))
    funs = {"real_imag": lambda np_: lambda z: np_.real(z) ** 2 + np_.imag(z) ** 2,
            "abs": lambda np_: lambda z: np_.abs(z) ** 2,
            "real": lambda np_: lambda z: np_.real(z) ** 3}
    _same(jax.grad(funs[name](jnp))(z), mlax.grad(funs[name](mnp))(z))


def test_holomorphic_and_real_arguments_keep_their_weak_type() -> None:
    z = complex(*RNG.uniform(-2, 2, 2))
    _same(jax.grad(lambda z: z ** 2, holomorphic=True)(z), mlax.grad(lambda z: z ** 2, holomorphic=True)(z))
    x = float(RNG.uniform(-2, 2))
    for j, m in [(lambda x: jnp.sin(x) * x, lambda x: mnp.sin(x) * x),
                 (lambda x: jnp.sum(x * jnp.ones(3)), lambda x: mnp.sum(x * mnp.ones(3)))]:
        _same(jax.grad(j)(x), mlax.grad(m)(x))
        _same(jax.grad(j)(np.float32(x)), mlax.grad(m)(np.float32(x)))
