"""mlax.lax.linalg's qr, eigh and svd against jax.lax.linalg: values and dtypes eagerly (the
interpreter) and under jit on the native CPU backend (LAPACK) and on XLA (jaxlib's LAPACK custom
calls), f32 and f64, square, tall, wide, empty and batched; derivatives (jvp of every result,
grad) against jax and against finite differences in float64; vmap against jax.vmap.

The three roads call the LAPACK routines jax's CPU lowering calls, so the factors carry jax's
signs and the values compare directly. Losses for finite differences are smooth functions of
the factors that do not depend on the sign of a singular vector or eigenvector (s, U diag(s) Vh,
V V^T and w), as jax's own tests use; eigh's matrices have well-separated eigenvalues, since its
derivative assumes distinct ones.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import mlax
from mlax.lax import linalg as mlinalg
from tests.linalg.test_primitives import BACKENDS, check
from tests.oracle import assert_same

jlinalg = jax.lax.linalg


def symmetric(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Symmetric matrices with eigenvalues 1, 2, ..., n (well separated) in random bases."""
    n = shape[-1]
    q, _ = np.linalg.qr(rng.standard_normal(shape))
    return ((q * np.arange(1, n + 1)) @ np.swapaxes(q, -1, -2)).astype(dtype)


def spread(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Matrices with distinct singular values away from zero (1 .. 2k)."""
    m, n = shape[-2:]
    k = min(m, n)
    u, _ = np.linalg.qr(rng.standard_normal((*shape[:-2], m, k)))
    v, _ = np.linalg.qr(rng.standard_normal((*shape[:-2], n, k)))
    return ((u * np.linspace(1, 2 * k, k)) @ np.swapaxes(v, -1, -2)).astype(dtype)


SHAPES = [(4, 4), (2, 5, 3), (3, 5), (2, 0, 3)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", SHAPES)
def test_qr(rng: np.random.Generator, dtype: Any, backend: str, shape: tuple[int, ...]) -> None:
    x = rng.standard_normal(shape).astype(dtype)
    for full in (True, False):
        flags = dict(full_matrices=full)
        check(functools.partial(mlinalg.qr, **flags), functools.partial(jlinalg.qr, **flags), backend, x,
              scale=10)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", SHAPES)
def test_svd(rng: np.random.Generator, dtype: Any, backend: str, shape: tuple[int, ...]) -> None:
    x = rng.standard_normal(shape).astype(dtype)
    for full, uv in ((True, True), (False, True), (True, False)):
        flags = dict(full_matrices=full, compute_uv=uv)
        check(functools.partial(mlinalg.svd, **flags), functools.partial(jlinalg.svd, **flags), backend, x,
              scale=10)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5, 5), (0, 0), (1, 1)])
def test_eigh(rng: np.random.Generator, dtype: Any, backend: str, shape: tuple[int, ...]) -> None:
    a = symmetric(rng, shape, dtype)
    lopsided = a + np.triu(rng.standard_normal(shape)).astype(dtype)  # which triangle is read matters
    check(mlinalg.eigh, jlinalg.eigh, backend, a, scale=10)
    for lower in (True, False):
        flags = dict(lower=lower, symmetrize_input=False)
        check(functools.partial(mlinalg.eigh, **flags), functools.partial(jlinalg.eigh, **flags), backend,
              lopsided, scale=10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rank_deficient_and_repeated(backend: str) -> None:
    """Values where the derivative degenerates still match: a repeated eigenvalue, zero singular
    values."""
    a = np.diag(np.array([2.0, 2.0, 5.0], np.float32))
    check(mlinalg.eigh, jlinalg.eigh, backend, a)
    x = np.outer(np.arange(1.0, 5.0), np.arange(1.0, 4.0)).astype(np.float32)
    check(lambda x: mlinalg.svd(x, compute_uv=False), lambda x: jlinalg.svd(x, compute_uv=False), backend, x,
          scale=10)


def test_errors_are_jaxs_kind() -> None:
    with pytest.raises(TypeError, match="f32, f64, complex64 or complex128, got int32"):
        mlinalg.svd(np.ones((3, 3), np.int32))
    with pytest.raises(TypeError, match="rank at least 2"):
        mlinalg.qr(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="square"):
        mlinalg.eigh(np.ones((2, 3), np.float32), symmetrize_input=False)


# --- derivatives and batching ---------------------------------------------------------------------


def _cases(rng: np.random.Generator, dtype: Any) -> dict[str, tuple[Callable, Callable, np.ndarray]]:
    """name -> (mlax loss, jax loss, argument): smooth scalar functions of the factors."""
    def weights(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(dtype)

    def qr_loss(lib: Any, full: bool, w_q: np.ndarray, w_r: np.ndarray) -> Callable:
        return lambda x: (lambda q, r: (q * w_q).sum() + (r * r * w_r).sum())(*lib.qr(x, full_matrices=full))

    def svd_loss(lib: Any, full: bool, w: np.ndarray, w_s: np.ndarray) -> Callable:
        def loss(x: Any) -> Any:
            u, s, vh = lib.svd(x, full_matrices=full)
            k = s.shape[-1]
            return ((u[..., :k] * s[..., None, :]) @ vh[..., :k, :] * w).sum() + (s * w_s).sum() \
                + ((u[..., :k] @ u[..., :k].swapaxes(-1, -2)) * w[..., :, :1]).sum()
        return loss

    def eigh_loss(lib: Any, w_v: np.ndarray, w_w: np.ndarray) -> Callable:
        def loss(a: Any) -> Any:
            v, w = lib.eigh(a)
            return ((v[..., :2] @ v[..., :2].swapaxes(-1, -2)) * w_v).sum() + (w * w * w_w).sum()
        return loss

    tall, wide, square = (rng.standard_normal(s).astype(dtype) for s in ((2, 5, 3), (2, 3, 5), (2, 4, 4)))
    cases = {}
    for name, x, full in (("qr_full_tall", tall, True), ("qr_reduced_tall", tall, False),
                          ("qr_wide", wide, True), ("qr_square", square, True)):
        q_cols = x.shape[-2] if full else min(x.shape[-2:])
        w_q, w_r = weights(2, x.shape[-2], q_cols), weights(2, q_cols, x.shape[-1])
        cases[name] = (qr_loss(mlinalg, full, w_q, w_r), qr_loss(jlinalg, full, w_q, w_r), x)
    for name, shape, full in (("svd_tall", (2, 5, 3), False), ("svd_wide", (2, 3, 5), False),
                              ("svd_square_full", (2, 4, 4), True)):
        w, w_s = weights(*shape), weights(2, min(shape[-2:]))
        cases[name] = (svd_loss(mlinalg, full, w, w_s), svd_loss(jlinalg, full, w, w_s),
                       spread(rng, shape, dtype))
    w_s = weights(2, 3)
    cases["svdvals"] = (lambda x: (mlinalg.svd(x, compute_uv=False) ** 2 * w_s).sum(),
                        lambda x: (jlinalg.svd(x, compute_uv=False) ** 2 * w_s).sum(),
                        spread(rng, (2, 3, 5), dtype))
    w_v, w_w = weights(2, 4, 4), weights(2, 4)
    cases["eigh"] = (eigh_loss(mlinalg, w_v, w_w), eigh_loss(jlinalg, w_v, w_w),
                     symmetric(rng, (2, 4, 4), dtype))
    return cases


CASES = ["qr_full_tall", "qr_reduced_tall", "qr_wide", "qr_square", "svd_tall", "svd_wide", "svd_square_full",
         "svdvals", "eigh"]


@pytest.mark.parametrize("backend", ["cpu", "xla"])
@pytest.mark.parametrize("case", CASES)
def test_grad_against_jax(rng: np.random.Generator, backend: str, case: str) -> None:
    fn, jax_fn, x = _cases(rng, np.float32)[case]
    expected = jax.jit(jax.grad(jax_fn))(x)
    assert_same(mlax.jit(mlax.grad(fn), backend=backend)(x), expected, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("case", CASES)
def test_grad_against_finite_differences(rng: np.random.Generator, x64: None, case: str) -> None:
    fn, jax_fn, x = _cases(rng, np.float64)[case]
    grad = np.asarray(mlax.jit(mlax.grad(fn))(x))
    assert_same(grad, jax.jit(jax.grad(jax_fn))(x), rtol=1e-8, atol=1e-8)
    direction = rng.standard_normal(x.shape)
    if case == "eigh":  # stay symmetric: eigh reads a symmetrized matrix
        direction = direction + np.swapaxes(direction, -1, -2)
    eps = 1e-6
    numeric = (float(fn(x + eps * direction)) - float(fn(x - eps * direction))) / (2 * eps)
    np.testing.assert_allclose(np.sum(grad * direction), numeric, rtol=1e-6)


JVPS = {
    "qr_full": (lambda x: mlinalg.qr(x), lambda x: jlinalg.qr(x), (3, 5, 3)),
    "svd": (lambda x: mlinalg.svd(x, full_matrices=False), lambda x: jlinalg.svd(x, full_matrices=False),
            (3, 3, 5)),
    "eigh": (mlinalg.eigh, jlinalg.eigh, (3, 4, 4)),
}


@pytest.mark.parametrize("backend", ["cpu", "xla"])
@pytest.mark.parametrize("name", JVPS)
def test_jvp_of_every_result(rng: np.random.Generator, backend: str, name: str) -> None:
    fn, jax_fn, shape = JVPS[name]
    x = (symmetric if name == "eigh" else spread)(rng, shape, np.float32)
    t = rng.standard_normal(shape).astype(np.float32)
    got = mlax.jit(lambda x, t: mlax.jvp(fn, (x,), (t,)), backend=backend)(x, t)
    primals, tangents = jax.jit(lambda x, t: jax.jvp(jax_fn, (x,), (t,)))(x, t)
    assert_same(tuple(got[0]), tuple(primals), rtol=1e-5, atol=1e-5)
    assert_same(tuple(got[1]), tuple(tangents), rtol=1e-3, atol=1e-3)


def test_svd_jvp_of_full_rectangular_matrices_is_refused_as_in_jax(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 3)).astype(np.float32)
    with pytest.raises(NotImplementedError, match="not implemented for full matrices"):
        mlax.jit(mlax.grad(lambda x: mlinalg.svd(x)[1].sum()))(x)


@pytest.mark.parametrize("backend", ["cpu", "xla"])
def test_vmap(rng: np.random.Generator, backend: str) -> None:
    x, a = rng.standard_normal((3, 2, 5, 4)).astype(np.float32), symmetric(rng, (3, 4, 4), np.float32)
    cases = [
        (lambda x: mlinalg.qr(x, full_matrices=False), lambda x: jlinalg.qr(x, full_matrices=False), x, 1),
        (mlinalg.svd, jlinalg.svd, x, 0),
        (mlinalg.eigh, jlinalg.eigh, a, 0),
    ]
    for fn, jax_fn, arg, axis in cases:
        got = mlax.jit(mlax.vmap(fn, in_axes=axis), backend=backend)(arg)
        assert_same(got, jax.jit(jax.vmap(jax_fn, in_axes=axis))(arg), rtol=1e-5, atol=1e-5)
