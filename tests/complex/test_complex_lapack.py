"""cholesky, triangular_solve and lu on complex64/complex128 against jax (SciPy's ?potrf/?trsm/?getrf
in the interpreter, the same routines called by the CPU backend, jaxlib's custom calls on XLA), and
the jnp.linalg / mlax.scipy.linalg functions built on them: values, dtypes, derivatives against jax
(holomorphic and real losses) and against finite differences in complex128."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
import mlax.scipy.linalg as msl
from mlax.lax import linalg as mlinalg
from tests.oracle import assert_same, random_normal, run

BACKENDS = ["eager", "cpu", "xla"]
TOL = {np.dtype(np.complex64): 2e-5, np.dtype(np.complex128): 1e-12}




def hermitian(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Well-conditioned Hermitian positive-definite matrices."""
    x = random_normal(rng, shape, np.complex128)
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def triangular(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    return (random_normal(rng, shape, np.complex128) + 2 * shape[-1] * np.eye(shape[-1])).astype(dtype)


@pytest.fixture(params=[np.complex64, np.complex128], ids=["c64", "c128"])
def dtype(request: pytest.FixtureRequest) -> Any:
    if request.param == np.complex128:
        request.getfixturevalue("x64")
    return np.dtype(request.param)


@pytest.mark.parametrize("backend", BACKENDS)
def test_primitives(rng: np.random.Generator, dtype: Any, backend: str) -> None:
    tol = TOL[dtype]
    h = hermitian(rng, (2, 4, 4), dtype)
    assert_same(run(mlinalg.cholesky, backend, h), jax.lax.linalg.cholesky(h), rtol=tol, atol=tol * 10)
    x = random_normal(rng, (2, 5, 3), dtype)
    assert_same(run(mlinalg.lu, backend, x), jax.lax.linalg.lu(x), rtol=tol, atol=tol * 10)
    a, b = triangular(rng, (2, 4, 4), dtype), random_normal(rng, (2, 4, 3), dtype)

    def solves(a: Any, b: Any, lin: Any = mlinalg) -> list[Any]:
        return [lin.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=t, conjugate_a=c)
                for lower in (True, False) for t in (True, False) for c in (True, False)]

    assert_same(run(solves, backend, a, b), solves(a, b, jax.lax.linalg), rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_failures_are_nan_in_both_parts(backend: str) -> None:
    a = np.array([[1, 2], [2, 1]], np.complex64)
    assert_same(run(mlinalg.cholesky, backend, a), jax.lax.linalg.cholesky(a))


def _functions(np_: Any, sl: Any) -> Callable[..., list[Any]]:
    def apply(h: Any, a: Any, b: Any) -> list[Any]:
        return [np_.linalg.cholesky(h), np_.linalg.solve(a, b), np_.linalg.inv(a), np_.linalg.det(a),
                *np_.linalg.slogdet(a), *np_.linalg.slogdet(a[..., :2, :2]), sl.solve(a, b),
                sl.cho_solve(sl.cho_factor(h), b), sl.lu_solve(sl.lu_factor(a), b, trans=2),
                sl.solve_triangular(a, b, lower=True, trans="C"), sl.det(a)]
    return apply


@pytest.mark.parametrize("backend", BACKENDS)
def test_front_end_functions(rng: np.random.Generator, dtype: Any, backend: str) -> None:
    h, a = hermitian(rng, (4, 4), dtype), triangular(rng, (4, 4), dtype)
    b, tol = random_normal(rng, (4, 2), dtype), TOL[dtype] * 10
    got = run(_functions(mnp, msl), backend, h, a, b)
    assert_same(got, _functions(jnp, jsl)(h, a, b), rtol=tol, atol=tol)


def _loss(np_: Any, sl: Any) -> Callable[..., Any]:
    """A real loss of every function, for grad with respect to complex inputs (jax's convention)."""
    def loss(h: Any, a: Any, b: Any) -> Any:
        outs = _functions(np_, sl)(h, a, b)
        return sum(np_.sum(np_.abs(o) ** 2) if o.dtype.kind == "c" else np_.sum(o) for o in outs)
    return loss


# eager: 45 s
@pytest.mark.parametrize("backend", [pytest.param("eager", marks=pytest.mark.slow), "cpu", "xla"])
def test_gradients(rng: np.random.Generator, x64: None, backend: str) -> None:
    h, a = hermitian(rng, (3, 3), np.complex128), triangular(rng, (3, 3), np.complex128)
    b = random_normal(rng, (3, 2), np.complex128)
    got = run(mlax.grad(_loss(mnp, msl), argnums=(0, 1, 2)), backend, h, a, b)
    expected = jax.grad(_loss(jnp, jsl), argnums=(0, 1, 2))(h, a, b)
    assert_same(got, expected, rtol=1e-9, atol=1e-9)
    # jax's convention: grad(f)(z) = df/dx - i df/dy, so df along d is Re(grad * d)
    direction, step = random_normal(rng, b.shape, np.complex128), 1e-3  # the loss is large: round-off
    f = _loss(jnp, jsl)
    numeric = (f(h, a, b + step * direction) - f(h, a, b - step * direction)) / (2 * step)
    np.testing.assert_allclose(np.sum(np.real(np.asarray(got[2]) * direction)), numeric, rtol=1e-7)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_holomorphic_jacobians(rng: np.random.Generator, backend: str) -> None:
    h, b = hermitian(rng, (3, 3), np.complex64), random_normal(rng, (3, 2), np.complex64)
    tol = 1e-4

    def lower_solve(lin: Any) -> Callable[[Any, Any], Any]:
        return lambda l_, b: lin.triangular_solve(l_, b, left_side=True, lower=True)

    lower = np.tril(h)
    assert_same(run(mlax.jacfwd(lower_solve(mlinalg), argnums=(0, 1), holomorphic=True), backend, lower, b),
                jax.jacfwd(lower_solve(jax.lax.linalg), argnums=(0, 1), holomorphic=True)(lower, b),
                rtol=tol, atol=tol)
    assert_same(run(mlax.jacrev(mnp.linalg.inv, holomorphic=True), backend, h),
                jax.jacrev(jnp.linalg.inv, holomorphic=True)(h), rtol=tol, atol=tol)
