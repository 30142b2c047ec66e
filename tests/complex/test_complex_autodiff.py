"""Autodiff on complex numbers against jax's numbers: grad of real-valued functions of complex
inputs (jax's convention, no formula of ours), holomorphic grad/jacfwd/jacrev, jvp, and the
dtype checks of grad."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.complex.test_complex import BACKENDS, check, random_complex, run

# jax warns when a complex value converts to a real type (mlax converts the real part, as jax does).
pytestmark = pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning",
                                        "ignore:Casting from complex:DeprecationWarning")

# Real-valued functions of a complex array.
REAL_VALUED: dict[str, Callable[[Any], Callable[[Any], Any]]] = {
    "abs_squared": lambda np_: lambda z: np_.sum(np_.abs(z) ** 2),
    "abs": lambda np_: lambda z: np_.sum(np_.abs(z)),
    "real_of_product": lambda np_: lambda z: np_.sum(np_.real(z * z * (1 + 2j))),
    "imag_of_exp": lambda np_: lambda z: np_.sum(np_.imag(np_.exp(z / 4))),
    "log_sqrt": lambda np_: lambda z: np_.sum(np_.real(np_.log(z) * np_.sqrt(z))),
    "conj_div": lambda np_: lambda z: np_.sum(np_.real(np_.conj(z) / (z + 4))),
    "convert": lambda np_: lambda z: np_.sum((z * z).astype(np_.float32)),
    "dot": lambda np_: lambda z: np_.real(np_.dot(z, np_.conj(z) * 1j)),
}

HOLOMORPHIC: dict[str, Callable[[Any], Callable[[Any], Any]]] = {
    "square": lambda np_: lambda z: z * z,
    "exp_log": lambda np_: lambda z: np_.exp(z / 3) / z + np_.log(z),
    "sqrt": lambda np_: lambda z: np_.sqrt(z) * (2 - 1j),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(REAL_VALUED))
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_grad_of_real_valued(name: str, dtype: Any, backend: str, rng: np.random.Generator,
                             request: Any) -> None:
    if dtype == np.complex128:
        request.getfixturevalue("x64")
    z = random_complex(rng, (4,), dtype)
    with jax.enable_x64(dtype == np.complex128):
        want = jax.grad(REAL_VALUED[name](jnp))(z)
    check(run(mlax.grad(REAL_VALUED[name](mnp)), backend, z), want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(HOLOMORPHIC))
def test_holomorphic(name: str, backend: str, rng: np.random.Generator) -> None:
    z = random_complex(rng, (3,), np.complex64)
    f, g = HOLOMORPHIC[name](mnp), HOLOMORPHIC[name](jnp)
    check(run(mlax.grad(f, holomorphic=True), backend, z[0]), jax.grad(g, holomorphic=True)(z[0]))
    check(run(mlax.jacfwd(f, holomorphic=True), backend, z), jax.jacfwd(g, holomorphic=True)(z))
    check(run(mlax.jacrev(f, holomorphic=True), backend, z), jax.jacrev(g, holomorphic=True)(z))


def test_jvp_and_vjp(rng: np.random.Generator) -> None:
    z, t = random_complex(rng, (5,), np.complex64), random_complex(rng, (5,), np.complex64)
    fn = lambda np_: lambda z: np_.abs(z) * np_.exp(np_.conj(z))  # noqa: E731
    for got, want in zip(mlax.jvp(fn(mnp), (z,), (t,)), jax.jvp(fn(jnp), (z,), (t,)), strict=True):
        check(got, want)
    ct = random_complex(rng, (5,), np.complex64)
    check(mlax.vjp(fn(mnp), z)[1](ct)[0], jax.vjp(fn(jnp), z)[1](ct)[0])


def test_grad_of_vmap_and_lax_parts(rng: np.random.Generator) -> None:
    x, y = rng.normal(size=(2, 4, 3)).astype(np.float32)

    def fn(lax: Any, np_: Any) -> Callable[[Any, Any], Any]:
        return lambda x, y: np_.sum(lax.imag(lax.complex(x, y) ** 2) + lax.real(lax.conj(lax.complex(y, x))))

    got = mlax.grad(lambda x, y: mlax.vmap(fn(mlax.lax, mnp))(x, y).sum(), argnums=(0, 1))(x, y)
    want = jax.grad(lambda x, y: jax.vmap(fn(jax.lax, jnp))(x, y).sum(), argnums=(0, 1))(x, y)
    for g, w in zip(got, want, strict=True):
        check(g, w)


def test_grad_dtype_checks(rng: np.random.Generator) -> None:
    z = random_complex(rng, (), np.complex64)
    with pytest.raises(TypeError, match="requires real-valued outputs.*pass holomorphic=True"):
        mlax.grad(lambda z: z * z)(z)
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex dtype"):
        mlax.grad(lambda x: x * x, holomorphic=True)(np.float32(2))
    with pytest.raises(TypeError, match="holomorphic=True requires outputs with complex dtype"):
        mlax.grad(lambda z: mnp.abs(z), holomorphic=True)(z)
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        mlax.jacfwd(lambda z: mnp.abs(z))(z)
