"""The complex-number section of JAX's autodiff cookbook (docs/notebooks/autodiff_cookbook.md,
"Complex numbers and differentiation"), each cell run with jax and with mlax, only the imports
changed: the JVP and VJP checks against the real Jacobian of (u, v), grad of a real function of a
complex input, holomorphic grad of sin and of conj, and grad through a complex Cholesky factor."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp

JAX = SimpleNamespace(np=jnp, grad=jax.grad, jvp=jax.jvp, vjp=jax.vjp, random=jax.random)
MLAX = SimpleNamespace(np=mnp, grad=mlax.grad, jvp=mlax.jvp, vjp=mlax.vjp, random=mlax.random)


def _setup(lib: Any, seed: int) -> tuple[Any, ...]:
    """The cookbook's random f(z) = u(x, y) + i v(x, y) (u, v linear), a point x + iy and a
    vector s + it, drawn from ``lib``'s PRNG as the cookbook draws them."""
    key = lib.random.PRNGKey(seed)
    key, subkey = lib.random.split(key)
    a, b, c, d = lib.random.uniform(subkey, (4,))
    key, subkey = lib.random.split(key)
    x, y = lib.random.uniform(subkey, (2,))
    key, subkey = lib.random.split(key)
    s, t = lib.random.uniform(subkey, (2,))

    def u(x: Any, y: Any) -> Any:
        return a * x + b * y

    def v(x: Any, y: Any) -> Any:
        return c * x + d * y

    def fun(z: Any) -> Any:
        re, im = lib.np.real(z), lib.np.imag(z)
        return u(re, im) + v(re, im) * 1j

    return u, v, fun, x, y, s, t


def _jvp_check(lib: Any, seed: int) -> tuple[Any, Any]:
    """The cookbook's JVP check: the tangent of f against the real Jacobian of (u, v)."""
    u, v, fun, x, y, s, t = _setup(lib, seed)
    _, ans = lib.jvp(fun, (x + y * 1j,), (s + t * 1j,))
    expected = (lib.grad(u, 0)(x, y) * s + lib.grad(u, 1)(x, y) * t + lib.grad(v, 0)(x, y) * s * 1j
                + lib.grad(v, 1)(x, y) * t * 1j)
    return ans, expected


def _vjp_check(lib: Any, seed: int) -> tuple[Any, Any]:
    """The cookbook's VJP check: the cotangent s + it pulled back through f."""
    u, v, fun, x, y, s, t = _setup(lib, seed)
    _, fun_vjp = lib.vjp(fun, x + y * 1j)
    (ans,) = fun_vjp(lib.np.array(s + t * 1j))
    expected = (lib.grad(u, 0)(x, y) * s + lib.grad(v, 0)(x, y) * (-t) + lib.grad(u, 1)(x, y) * s * (-1j)
                + lib.grad(v, 1)(x, y) * (-t) * (-1j))
    return ans, expected


@pytest.mark.parametrize("check", [_jvp_check, _vjp_check])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_jvp_and_vjp_checks(check: Any, seed: int) -> None:
    ans, expected = check(MLAX, seed)
    np.testing.assert_allclose(np.asarray(ans), np.asarray(expected), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(ans), np.asarray(check(JAX, seed)[0]), rtol=1e-6, atol=1e-6)


def _cells(lib: Any) -> dict[str, Any]:
    def real_of_complex(z: Any) -> Any:
        x, y = lib.np.real(z), lib.np.imag(z)
        return x**2 + y**2

    a = lib.np.array([[5., 2.+3j, 5j], [2.-3j, 7., 1.+7j], [-5j, 1.-7j, 12.]])

    def through_cholesky(x: Any) -> Any:
        factor = lib.np.linalg.cholesky(x)
        return lib.np.sum((factor - lib.np.sin(factor))**2)

    z = 3. + 4j
    return {
        "grad of a real function": lib.grad(real_of_complex)(z),
        "holomorphic sin": lib.grad(lib.np.sin, holomorphic=True)(z),
        "holomorphic=True on conj": lib.grad(lib.np.conjugate, holomorphic=True)(z),
        "through a complex Cholesky": lib.grad(through_cholesky, holomorphic=True)(a),
    }


def test_cells_match_jax() -> None:
    got, expected = _cells(MLAX), _cells(JAX)
    for name, value in expected.items():
        assert np.asarray(got[name]).dtype == np.asarray(value).dtype, name
        np.testing.assert_allclose(np.asarray(got[name]), np.asarray(value), rtol=2e-5, atol=2e-5,
                                   err_msg=name)
    np.testing.assert_allclose(np.asarray(got["grad of a real function"]), 6 - 8j)


def test_complex_output_needs_holomorphic() -> None:
    with pytest.raises(TypeError, match="holomorphic=True"):
        mlax.grad(mnp.sin)(3. + 4j)
