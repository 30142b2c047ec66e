"""The front-end functions on qr, eigh and svd against jax: mlax.numpy.linalg (qr, svd, svdvals,
eigh, eigvalsh, pinv, lstsq, matrix_rank, cond, the spectral norms, slogdet(method='qr')),
mlax.scipy.linalg (qr, svd, eigh, polar), mlax.random.orthogonal / multivariate_normal and
mlax.nn.initializers.orthogonal: values and dtypes eagerly and under jit on both backends, f32 and
f64, batched; gradients against jax and finite differences in float64; vmap."""

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
from tests.linalg.test_primitives import BACKENDS
from tests.linalg.test_spectral import spread, symmetric
from tests.oracle import assert_same, run

TOL = {np.dtype(np.float32): 2e-4, np.dtype(np.float64): 1e-10}


def check(fn: Callable[..., Any], jax_fn: Callable[..., Any], backend: str, *args: Any,
          tol_dtype: Any = None) -> None:
    tol = TOL[np.dtype(tol_dtype or np.result_type(*args))]
    plain = lambda x: tuple(x) if isinstance(x, tuple) else x  # noqa: E731  (mlax's and jax's named tuples)
    assert_same(plain(run(fn, backend, *args)), plain(jax.jit(jax_fn)(*args)), rtol=tol, atol=tol)


P = functools.partial
FUNCTIONS = {  # name -> (mlax, jax, the matrices: "general" (2, 5, 3), "symmetric" (2, 4, 4))
    "qr_reduced": (mnp.linalg.qr, jnp.linalg.qr, "general"),
    "qr_complete": (P(mnp.linalg.qr, mode="complete"), P(jnp.linalg.qr, mode="complete"), "general"),
    "qr_r": (P(mnp.linalg.qr, mode="r"), P(jnp.linalg.qr, mode="r"), "wide"),
    "svd": (mnp.linalg.svd, jnp.linalg.svd, "general"),
    "svd_reduced": (P(mnp.linalg.svd, full_matrices=False), P(jnp.linalg.svd, full_matrices=False), "wide"),
    "svd_hermitian": (P(mnp.linalg.svd, hermitian=True), P(jnp.linalg.svd, hermitian=True), "indefinite"),
    "svdvals_hermitian": (P(mnp.linalg.svd, hermitian=True, compute_uv=False),
                          P(jnp.linalg.svd, hermitian=True, compute_uv=False), "indefinite"),
    "svdvals": (mnp.linalg.svdvals, jnp.linalg.svdvals, "general"),
    "eigh": (mnp.linalg.eigh, jnp.linalg.eigh, "symmetric"),
    "eigh_upper": (P(mnp.linalg.eigh, UPLO="U", symmetrize_input=False),
                   P(jnp.linalg.eigh, UPLO="U", symmetrize_input=False), "symmetric"),
    "eigvalsh": (mnp.linalg.eigvalsh, jnp.linalg.eigvalsh, "symmetric"),
    "pinv": (mnp.linalg.pinv, jnp.linalg.pinv, "general"),
    "pinv_hermitian": (P(mnp.linalg.pinv, hermitian=True), P(jnp.linalg.pinv, hermitian=True), "indefinite"),
    "matrix_rank": (mnp.linalg.matrix_rank, jnp.linalg.matrix_rank, "deficient"),
    "cond": (mnp.linalg.cond, jnp.linalg.cond, "general"),
    "cond_-2": (P(mnp.linalg.cond, p=-2), P(jnp.linalg.cond, p=-2), "wide"),
    "cond_fro": (P(mnp.linalg.cond, p="fro"), P(jnp.linalg.cond, p="fro"), "symmetric"),
    "norm_2": (P(mnp.linalg.norm, ord=2, axis=(-2, -1)), P(jnp.linalg.norm, ord=2, axis=(-2, -1)), "general"),
    "norm_-2": (P(mnp.linalg.norm, ord=-2, axis=(0, 2), keepdims=True),
                P(jnp.linalg.norm, ord=-2, axis=(0, 2), keepdims=True), "general"),
    "norm_nuc": (P(mnp.linalg.norm, ord="nuc", axis=(-1, -2)), P(jnp.linalg.norm, ord="nuc", axis=(-1, -2)),
                 "wide"),
    "slogdet_qr": (P(mnp.linalg.slogdet, method="qr"), P(jnp.linalg.slogdet, method="qr"), "indefinite"),
    "scipy_qr": (msl.qr, jsl.qr, "general"),
    "scipy_qr_economic": (P(msl.qr, mode="economic"), P(jsl.qr, mode="economic"), "wide"),
    "scipy_qr_r": (P(msl.qr, mode="r"), P(jsl.qr, mode="r"), "general"),
    "scipy_svd": (P(msl.svd, full_matrices=False), P(jsl.svd, full_matrices=False), "general"),
    "scipy_svdvals": (P(msl.svd, compute_uv=False), P(jsl.svd, compute_uv=False), "wide"),
    "scipy_eigh": (P(msl.eigh, lower=False), P(jsl.eigh, lower=False), "symmetric"),
    "scipy_eigvalsh": (P(msl.eigh, eigvals_only=True), P(jsl.eigh, eigvals_only=True), "symmetric"),
    "polar": (msl.polar, jsl.polar, "general"),
    "polar_left": (P(msl.polar, side="left"), P(jsl.polar, side="left"), "wide"),
    "polar_svd": (P(msl.polar, method="svd"), P(jsl.polar, method="svd"), "wide"),
}


def matrices(rng: np.random.Generator, kind: str, dtype: Any) -> np.ndarray:
    if kind == "symmetric":
        return symmetric(rng, (2, 4, 4), dtype)
    if kind == "indefinite":  # eigenvalues of both signs, distinct magnitudes
        return symmetric(rng, (2, 4, 4), dtype) - np.asarray(2.5, dtype) * np.eye(4, dtype=dtype)
    if kind == "deficient":  # ranks 2 and 3
        x = rng.standard_normal((2, 5, 3)).astype(dtype)
        x[0, :, 2] = x[0, :, 0] + x[0, :, 1]
        return x
    return spread(rng, (2, 5, 3) if kind == "general" else (2, 3, 5), dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["general", "wide", "symmetric", "indefinite", "deficient"])
def test_functions(rng: np.random.Generator, dtype: Any, backend: str, kind: str) -> None:
    """Every function of FUNCTIONS on one kind of matrices, traced into one program (one compile
    per backend), each result compared on its own."""
    names = [name for name, (_, _, k) in FUNCTIONS.items() if k == kind]
    x = matrices(rng, kind, dtype)
    got = run(lambda x: [FUNCTIONS[name][0](x) for name in names], backend, x)
    expected = jax.jit(lambda x: [FUNCTIONS[name][1](x) for name in names])(x)
    for name, out, ref in zip(names, got, expected, strict=True):
        tol = TOL[np.dtype(dtype)] * (10 if name.startswith("polar") else 1)
        plain = tuple(out) if isinstance(out, tuple) else out
        assert_same(plain, tuple(ref) if isinstance(ref, tuple) else ref, rtol=tol, atol=tol), name


@pytest.mark.parametrize("backend", BACKENDS)
def test_lstsq(rng: np.random.Generator, dtype: Any, backend: str) -> None:
    a = spread(rng, (6, 4), dtype)
    for b in (rng.standard_normal(6).astype(dtype), rng.standard_normal((6, 2)).astype(dtype)):
        check(mnp.linalg.lstsq, jnp.linalg.lstsq, backend, a, b)
    rank_deficient = np.concatenate([a[:, :3], a[:, :1]], axis=1)
    check(P(mnp.linalg.lstsq, rcond=1e-3), P(jnp.linalg.lstsq, rcond=1e-3), backend, rank_deficient, b)


def test_errors_are_jaxs() -> None:
    x = np.ones((3, 3), np.float32)
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode"):
        mnp.linalg.qr(x, mode="bogus")
    with pytest.raises(ValueError, match="UPLO"):
        mnp.linalg.eigh(x, UPLO="X")
    with pytest.raises(ValueError, match="at least 2D"):
        mnp.linalg.cond(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="only one of rtol and rcond"):
        mnp.linalg.pinv(x, rtol=1e-3, rcond=1e-3)
    with pytest.raises(NotImplementedError, match="b=None"):
        msl.eigh(x, b=x)
    with pytest.raises(ValueError, match="side"):
        msl.polar(x, side="up")


# --- derivatives, batching, random ----------------------------------------------------------------

GRADS = {  # name -> (mlax scalar function, jax scalar function, matrix kind)
    "pinv": (lambda a: (mnp.linalg.pinv(a) ** 2).sum(), lambda a: (jnp.linalg.pinv(a) ** 2).sum(), "general"),
    "norm_nuc": (lambda a: mnp.linalg.norm(a, "nuc", axis=(-2, -1)).sum(),
                 lambda a: jnp.linalg.norm(a, "nuc", axis=(-2, -1)).sum(), "wide"),
    "eigvalsh": (lambda a: (mnp.linalg.eigvalsh(a) ** 3).sum(), lambda a: (jnp.linalg.eigvalsh(a) ** 3).sum(),
                 "symmetric"),
    "slogdet_qr": (lambda a: mnp.linalg.slogdet(a, method="qr")[1].sum(),
                   lambda a: jnp.linalg.slogdet(a, method="qr")[1].sum(), "indefinite"),
    "polar_svd": (lambda a: (msl.polar(a[0], method="svd")[1] ** 2).sum(),
                  lambda a: (jsl.polar(a[0], method="svd")[1] ** 2).sum(), "general"),
}


@pytest.mark.parametrize("backend", ["cpu", "xla"])
@pytest.mark.parametrize("name", GRADS)
def test_grad_against_jax(rng: np.random.Generator, backend: str, name: str) -> None:
    fn, jax_fn, kind = GRADS[name]
    x = matrices(rng, kind, np.float32)
    expected = jax.jit(jax.grad(jax_fn))(x)
    assert_same(mlax.jit(mlax.grad(fn), backend=backend)(x), expected, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("name", GRADS)
def test_grad_against_finite_differences(rng: np.random.Generator, x64: None, name: str) -> None:
    fn, jax_fn, kind = GRADS[name]
    x = matrices(rng, kind, np.float64)
    grad = np.asarray(mlax.jit(mlax.grad(fn))(x))
    assert_same(grad, jax.jit(jax.grad(jax_fn))(x), rtol=1e-8, atol=1e-8)
    direction = rng.standard_normal(x.shape)
    if kind in ("symmetric", "indefinite"):
        direction = direction + np.swapaxes(direction, -1, -2)
    eps = 1e-6
    numeric = (float(fn(x + eps * direction)) - float(fn(x - eps * direction))) / (2 * eps)
    np.testing.assert_allclose(np.sum(grad * direction), numeric, rtol=1e-6)


def test_vmap(rng: np.random.Generator) -> None:
    x, a = spread(rng, (3, 5, 3), np.float32), symmetric(rng, (3, 4, 4), np.float32)
    cases = ((mnp.linalg.pinv, jnp.linalg.pinv, x), (mnp.linalg.eigvalsh, jnp.linalg.eigvalsh, a),
             (P(msl.polar, method="svd"), P(jsl.polar, method="svd"), x))
    for fn, jax_fn, arg in cases:
        assert_same(mlax.jit(mlax.vmap(fn))(arg), jax.jit(jax.vmap(jax_fn))(arg), rtol=1e-4, atol=1e-4)


def _draws(random: Any, initializers: Any, key: Any, dtype: Any) -> list[Any]:
    orthogonal = [random.orthogonal(key, n, shape, dtype, m) for n, shape, m in ((3, (), None), (4, (2,), 6),
                                                                                 (5, (), 2))]
    inits = [initializers.orthogonal(2.0, axis)(key, shape, dtype) for shape, axis in (((3, 4), -1),
                                                                                      ((2, 3, 5), 0))]
    return [*orthogonal, *inits, initializers.delta_orthogonal()(key, (3, 3, 2, 4), dtype)]


# 7-15 s each: cpu by default
@pytest.mark.parametrize("backend", [b if b == "cpu" else pytest.param(b, marks=pytest.mark.slow)
                                     for b in BACKENDS])
def test_random_orthogonal_and_initializers(dtype: Any, backend: str) -> None:
    key = np.asarray(jax.random.PRNGKey(7))
    check(lambda k: _draws(mlax.random, mlax.nn.initializers, k, dtype),
          lambda k: _draws(jax.random, jax.nn.initializers, k, dtype), backend, key, tol_dtype=dtype)


@pytest.mark.parametrize("method", ["svd", "eigh"])
def test_multivariate_normal(dtype: Any, method: str) -> None:
    key = np.asarray(jax.random.PRNGKey(3))
    mean = np.array([1.0, -2.0, 0.5], dtype)
    cov = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]], dtype)
    draw = P(mlax.random.multivariate_normal, shape=(4,), method=method)
    jax_draw = P(jax.random.multivariate_normal, shape=(4,), method=method)
    for backend in ("eager", "cpu"):
        check(draw, jax_draw, backend, key, mean, cov)
