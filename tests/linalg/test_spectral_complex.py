"""qr, eigh and svd on complex64/complex128 against jax: the primitives (LAPACK's ?geqrf/?ungqr,
?heevd and ?gesdd in the interpreter through SciPy, the same routines from the CPU backend,
jaxlib's custom calls on XLA), their JVPs (jax's complex conventions: conjugate transposes,
qr's imaginary diagonal correction, the real eigenvalue and singular-value tangents, svd's
phase term), gradients of real losses against jax and finite differences in complex128, vmap,
and the jnp.linalg / mlax.scipy.linalg functions built on them.

Inputs have well-separated spectra (the eigh and svd derivatives assume distinct values); the
three roads call jax's LAPACK routines, so vectors carry jax's phases and compare directly.
"""

from __future__ import annotations

import functools
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
from tests.linalg.test_primitives import BACKENDS, TOL, check
from tests.oracle import assert_same, random_normal, run

jlinalg = jax.lax.linalg



def _unitary(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    q, _ = np.linalg.qr(random_normal(rng, shape, np.complex128))
    return q


def hermitian(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Hermitian matrices with eigenvalues -n/2 .. n/2 (distinct, both signs) in random bases."""
    n = shape[-1]
    q = _unitary(rng, shape)
    values = np.arange(n) - n / 2 + 0.5
    return ((q * values) @ np.conj(np.swapaxes(q, -1, -2))).astype(dtype)


def spread(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Complex matrices with distinct singular values 1 .. 2k."""
    m, n = shape[-2:]
    k = min(m, n)
    u, v = _unitary(rng, (*shape[:-2], m, k)), _unitary(rng, (*shape[:-2], n, k))
    return ((u * np.linspace(1, 2 * k, k)) @ np.conj(np.swapaxes(v, -1, -2))).astype(dtype)


SHAPES = [(4, 4), (2, 5, 3), (3, 5), (2, 0, 3)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", SHAPES)
def test_qr_and_svd(rng: np.random.Generator, complex_dtype: Any, backend: str,
                    shape: tuple[int, ...]) -> None:
    x = random_normal(rng, shape, complex_dtype)
    for full in (True, False):
        flags = dict(full_matrices=full)
        check(functools.partial(mlinalg.qr, **flags), functools.partial(jlinalg.qr, **flags), backend, x,
              scale=10)
    for full, uv in ((True, True), (False, True), (True, False)):
        flags = dict(full_matrices=full, compute_uv=uv)
        check(functools.partial(mlinalg.svd, **flags), functools.partial(jlinalg.svd, **flags), backend, x,
              scale=10)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5, 5), (0, 0)])
def test_eigh(rng: np.random.Generator, complex_dtype: Any, backend: str, shape: tuple[int, ...]) -> None:
    a = hermitian(rng, shape, complex_dtype)
    check(mlinalg.eigh, jlinalg.eigh, backend, a, scale=10)
    lopsided = a + np.triu(random_normal(rng, shape, complex_dtype))  # which triangle is read matters
    for lower in (True, False):
        flags = dict(lower=lower, symmetrize_input=False)
        check(functools.partial(mlinalg.eigh, **flags), functools.partial(jlinalg.eigh, **flags), backend,
              lopsided, scale=10)


def test_eigenvalues_and_singular_values_are_real() -> None:
    x = np.eye(3, dtype=np.complex64) * (1 + 2j)
    assert mlinalg.eigh(x)[1].dtype == np.float32
    assert mlinalg.svd(x)[1].dtype == np.float32
    assert mlax.jit(mlinalg.svd, backend="cpu")(x)[1].dtype == np.float32


_DECOMPOSITIONS = {
    "qr_full": (lambda lin: functools.partial(lin.qr, full_matrices=True), [(4, 4), (5, 3), (3, 5)]),
    "qr_reduced": (lambda lin: functools.partial(lin.qr, full_matrices=False), [(5, 3), (2, 3, 5)]),
    "svd": (lambda lin: functools.partial(lin.svd, full_matrices=False), [(4, 4), (5, 3), (2, 3, 5)]),
    "svd_values": (lambda lin: functools.partial(lin.svd, compute_uv=False), [(5, 3), (3, 5)]),
    "eigh": (lambda lin: lin.eigh, [(4, 4), (2, 3, 3)]),
}


def _input(rng: np.random.Generator, name: str, shape: tuple[int, ...]) -> np.ndarray:
    return hermitian(rng, shape, np.complex128) if name == "eigh" else spread(rng, shape, np.complex128)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(_DECOMPOSITIONS))
def test_jvp_of_every_result(rng: np.random.Generator, x64: None, backend: str, name: str) -> None:
    make, shapes = _DECOMPOSITIONS[name]
    for shape in shapes:
        x, dx = _input(rng, name, shape), _input(rng, name, shape)
        got = run(lambda x, dx: mlax.jvp(make(mlinalg), (x,), (dx,)), backend, x, dx)
        assert_same(got, jax.jvp(make(jlinalg), (x,), (dx,)), rtol=1e-9, atol=1e-9)


def _real_loss(lin: Any, np_: Any, name: str, weights: list[np.ndarray]) -> Callable[[Any], Any]:
    """A real function of every result that does not depend on the vectors' phases (|q_ij|^2 of
    qr changes with them, so qr's loss uses Q R and R's diagonal magnitude)."""
    make = _DECOMPOSITIONS[name][0](lin)

    def loss(x: Any) -> Any:
        outs = make(x)
        if name.startswith("qr"):
            q, r = outs
            diagonal = np_.diagonal(r, axis1=-2, axis2=-1)
            return np_.sum(np_.real(weights[0] * (q @ r))) + np_.sum(np_.abs(diagonal))
        if name == "svd":
            u, s, vh = outs
            return np_.sum(np_.real(weights[0] * ((u * s[..., None, :]) @ vh))) + np_.sum(weights[1] * s)
        if name == "svd_values":
            return np_.sum(weights[1] * outs)
        v, w = outs
        projector = v @ np_.conj(np_.swapaxes(v, -1, -2))
        return np_.sum(np_.real(weights[0] * projector)) + np_.sum(weights[1] * w)

    return loss


@pytest.mark.parametrize("name", sorted(_DECOMPOSITIONS))
def test_grad_against_jax_and_finite_differences(rng: np.random.Generator, x64: None, name: str) -> None:
    shape = _DECOMPOSITIONS[name][1][-1]
    x = _input(rng, name, shape)
    weights = [random_normal(rng, shape, np.complex128),
               rng.standard_normal(shape[:-1])[..., : min(shape[-2:])]]
    expected = jax.grad(_real_loss(jlinalg, jnp, name, weights))(x)
    for backend in BACKENDS:
        got = run(mlax.grad(_real_loss(mlinalg, mnp, name, weights)), backend, x)
        assert_same(got, expected, rtol=1e-9, atol=1e-9)
    # jax's convention: grad(f)(z) = df/dx - i df/dy, so the derivative along d is Re(grad * d)
    direction = _input(rng, name, shape)
    f, step = _real_loss(jlinalg, jnp, name, weights), 1e-5
    numeric = (f(x + step * direction) - f(x - step * direction)) / (2 * step)
    np.testing.assert_allclose(np.sum(np.real(np.asarray(expected) * direction)), numeric, rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap(rng: np.random.Generator, backend: str) -> None:
    x = random_normal(rng, (3, 4, 2), np.complex64)
    h = hermitian(rng, (3, 3, 3), np.complex64)

    def both(lin: Any) -> Callable[[Any, Any], Any]:
        return lambda x, h: (*lin.qr(x), *lin.svd(x, full_matrices=False), *lin.eigh(h))

    got = run(mlax.vmap(both(mlinalg), in_axes=(0, 0)), backend, x, h)
    assert_same(got, jax.vmap(both(jlinalg))(x, h), rtol=1e-5, atol=1e-5)


def _front_end(np_: Any, sl: Any) -> Callable[..., list[Any]]:
    """Every jnp.linalg and scipy.linalg function on qr/eigh/svd, on a square, a tall and a
    Hermitian matrix and a right-hand side."""
    def apply(a: Any, t: Any, h: Any, b: Any) -> list[Any]:
        la = np_.linalg
        return [*la.qr(t), la.qr(t, mode="r"), *la.qr(a, mode="complete"), *la.svd(t),
                *la.svd(h, hermitian=True), la.svdvals(a), *la.eigh(h), la.eigvalsh(h, UPLO="U"), la.pinv(t),
                la.pinv(h, hermitian=True), *la.lstsq(t, b), la.matrix_rank(a), la.cond(a), la.norm(a, 2),
                la.norm(a, -2), la.norm(a, "nuc"),
                *sl.qr(t), *sl.qr(t, mode="economic"), *sl.svd(t), *sl.eigh(h), sl.eigh(h, eigvals_only=True),
                *sl.polar(a), *sl.polar(t.T, side="left"), *sl.polar(a, method="svd")]
    return apply


@pytest.mark.parametrize("backend", ["eager", "cpu", "xla"])
def test_front_end_functions(rng: np.random.Generator, complex_dtype: Any, backend: str) -> None:
    a, t = spread(rng, (4, 4), complex_dtype), spread(rng, (5, 3), complex_dtype)
    h, b = hermitian(rng, (4, 4), complex_dtype), random_normal(rng, (5, 2), complex_dtype)
    tol = TOL[complex_dtype] * 100
    got = run(_front_end(mnp, msl), backend, a, t, h, b)
    assert_same(got, _front_end(jnp, jsl)(a, t, h, b), rtol=tol, atol=tol)


def _front_end_loss(np_: Any, sl: Any) -> Callable[..., Any]:
    def loss(a: Any, t: Any) -> Any:
        unitary, positive = sl.polar(a, method="svd")  # QDWH's while_loop has no reverse mode, in jax too
        return (np_.sum(np_.abs(np_.linalg.pinv(t)) ** 2) + np_.linalg.norm(a, "nuc") + np_.linalg.norm(t, 2)
                + np_.sum(np_.real(unitary * np_.conj(a))) + np_.sum(np_.abs(positive))
                + np_.sum(np_.abs(np_.linalg.lstsq(t, t[:, :1])[0])))
    return loss


@pytest.mark.parametrize("backend", BACKENDS)
def test_front_end_gradients(rng: np.random.Generator, x64: None, backend: str) -> None:
    a, t = spread(rng, (3, 3), np.complex128), spread(rng, (4, 3), np.complex128)
    got = run(mlax.grad(_front_end_loss(mnp, msl), argnums=(0, 1)), backend, a, t)
    expected = jax.grad(_front_end_loss(jnp, jsl), argnums=(0, 1))(a, t)
    assert_same(got, expected, rtol=1e-8, atol=1e-8)


def test_slogdet_by_qr_refuses_complex_as_jax() -> None:
    a = random_normal(np.random.default_rng(0), (3, 3), np.complex64)
    with pytest.raises(NotImplementedError, match="not implemented for complex inputs"):
        jnp.linalg.slogdet(a, method="qr")
    with pytest.raises(NotImplementedError, match="not implemented for complex inputs"):
        mnp.linalg.slogdet(a, method="qr")
