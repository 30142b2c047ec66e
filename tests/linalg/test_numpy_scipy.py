"""mlax.numpy.linalg (cholesky, solve, inv, det, slogdet) and mlax.scipy.linalg (solve_triangular,
cholesky, cho_factor/cho_solve, lu, lu_factor/lu_solve, solve with assume_a, inv, det) against jax:
values and dtypes eagerly and under jit on the native and XLA backends, f32 and f64, batched,
singular and ill-conditioned inputs, gradients (against jax and finite differences) and vmap."""

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
from tests.linalg.test_primitives import BACKENDS, spd, triangular
from tests.oracle import assert_same, run

TOL = {np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-10}


def check(fn: Callable[..., Any], jax_fn: Callable[..., Any], backend: str, *args: Any) -> None:
    tol = TOL[np.result_type(*args)]
    plain = lambda x: tuple(x) if isinstance(x, tuple) else x  # noqa: E731  (mlax's and jax's named tuples)
    assert_same(plain(run(fn, backend, *args)), plain(jax_fn(*args)), rtol=tol, atol=tol)


def general(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    return (rng.standard_normal(shape) + 2 * np.eye(shape[-1])).astype(dtype)


NUMPY = {
    "solve": (lambda a, b: mnp.linalg.solve(a, b), lambda a, b: jnp.linalg.solve(a, b)),
    "inv": (mnp.linalg.inv, jnp.linalg.inv),
    "det": (mnp.linalg.det, jnp.linalg.det),
    "slogdet": (mnp.linalg.slogdet, jnp.linalg.slogdet),
    "cholesky": (mnp.linalg.cholesky, jnp.linalg.cholesky),
    "cholesky_upper": (functools.partial(mnp.linalg.cholesky, upper=True),
                       functools.partial(jnp.linalg.cholesky, upper=True)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_numpy_linalg(rng: np.random.Generator, dtype: Any, backend: str, n: int) -> None:
    a = general(rng, (2, n, n), dtype)
    for name, (fn, jax_fn) in NUMPY.items():
        args = (a, rng.standard_normal((2, n, 3)).astype(dtype)) if name == "solve" else (a,)
        if name.startswith("cholesky"):
            args = (spd(rng, (2, n, n), dtype),)
        check(fn, jax_fn, backend, *args)
    check(NUMPY["solve"][0], NUMPY["solve"][1], backend, a[0], rng.standard_normal(n).astype(dtype))
    check(NUMPY["solve"][0], NUMPY["solve"][1], backend, a[0], rng.standard_normal((3, n, 2)).astype(dtype))


@pytest.mark.parametrize("backend", BACKENDS)
def test_singular_and_ill_conditioned(backend: str) -> None:
    singular = np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0], [1.0, 0.0, 1.0, 0.0],
                         [0.0, 1.0, 1.0, 2.0]], np.float32)
    hilbert = (1.0 / (np.arange(6)[:, None] + np.arange(6)[None, :] + 1)).astype(np.float32)
    for fn, jax_fn in (NUMPY["det"], NUMPY["slogdet"]):
        check(fn, jax_fn, backend, singular)
    got = tuple(run(NUMPY["slogdet"][0], backend, hilbert))
    assert_same(got, tuple(jnp.linalg.slogdet(hilbert)), rtol=1e-3, atol=1e-3)
    not_pd = -np.eye(3, dtype=np.float32)
    check(NUMPY["cholesky"][0], NUMPY["cholesky"][1], backend, not_pd)


@pytest.mark.parametrize("backend", ["cpu", "xla"])
@pytest.mark.parametrize("name", ["solve", "inv", "det", "slogdet", "cholesky"])
def test_numpy_linalg_grad(rng: np.random.Generator, backend: str, name: str) -> None:
    fn, jax_fn = NUMPY[name]
    a = spd(rng, (2, 5, 5), np.float32) if name == "cholesky" else general(rng, (2, 5, 5), np.float32)
    b = rng.standard_normal((2, 5, 3)).astype(np.float32)
    w = rng.standard_normal((2, 5, 5)).astype(np.float32)

    def scalar(f: Callable[..., Any]) -> Callable[..., Any]:
        if name == "solve":
            return lambda a, b: (f(a, b) ** 2).sum()
        if name == "slogdet":
            return lambda a: f(a)[1].sum()
        return lambda a: (f(a) * (w if name in ("inv", "cholesky") else 1.0)).sum()

    args = (a, b) if name == "solve" else (a,)
    argnums = tuple(range(len(args)))
    got = mlax.jit(mlax.grad(scalar(fn), argnums=argnums), backend=backend)(*args)
    assert_same(got, jax.grad(scalar(jax_fn), argnums=argnums)(*args), rtol=2e-3, atol=2e-3)


def test_det_grad_at_rank_n_minus_1_is_jaxs(rng: np.random.Generator) -> None:
    """The cofactor rule: finite where solve-based rules give NaN."""
    a = rng.standard_normal((4, 4)).astype(np.float32)
    a[3] = a[0] + a[1]
    got = mlax.jit(mlax.grad(mnp.linalg.det))(a)
    assert np.isfinite(np.asarray(got)).all()
    assert_same(got, jax.grad(jnp.linalg.det)(a), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("name", ["solve", "det", "slogdet", "inv"])
def test_numpy_linalg_grad_against_finite_differences(rng: np.random.Generator, x64: None, name: str) -> None:
    fn = NUMPY[name][0]
    a, b = general(rng, (5, 5), np.float64), rng.standard_normal((5, 2))
    scalar = {"solve": lambda a: (fn(a, b) ** 2).sum(), "slogdet": lambda a: fn(a)[1],
              "det": fn, "inv": lambda a: (fn(a) ** 2).sum()}[name]
    grad = np.asarray(mlax.jit(mlax.grad(scalar))(a))
    direction, eps = rng.standard_normal(a.shape), 1e-6
    numeric = (float(scalar(a + eps * direction)) - float(scalar(a - eps * direction))) / (2 * eps)
    np.testing.assert_allclose(np.sum(grad * direction), numeric, rtol=1e-6)


@pytest.mark.parametrize("backend", ["cpu", "xla"])
def test_vmap(rng: np.random.Generator, backend: str) -> None:
    a, b = general(rng, (3, 4, 4), np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    got = mlax.jit(mlax.vmap(mnp.linalg.solve), backend=backend)(a, b)
    assert_same(got, jax.vmap(jnp.linalg.solve)(a, b), rtol=1e-5, atol=1e-5)
    got = mlax.jit(mlax.vmap(mlax.grad(mnp.linalg.det)), backend=backend)(a)
    assert_same(got, jax.vmap(jax.grad(jnp.linalg.det))(a), rtol=1e-4, atol=1e-4)


# --- mlax.scipy.linalg ----------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:jax.scipy.linalg.cho_solve:FutureWarning")  # jax's solve(assume_a='pos')
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("lower", [False, True])
def test_scipy_cholesky_and_triangular_solves(rng: np.random.Generator, dtype: Any, backend: str,
                                              lower: bool) -> None:
    p, t = spd(rng, (2, 4, 4), dtype), triangular(rng, (2, 4, 4), dtype)
    b, v = rng.standard_normal((2, 4, 3)).astype(dtype), rng.standard_normal(4).astype(dtype)
    check(lambda a: msl.cholesky(a, lower=lower), lambda a: jsl.cholesky(a, lower=lower), backend, p)
    check(lambda a, b: msl.cho_solve(msl.cho_factor(a, lower=lower), b),
          lambda a, b: jsl.cho_solve(jsl.cho_factor(a, lower=lower), b), backend, p, b)
    for trans in (0, 1, "C"):
        check(functools.partial(msl.solve_triangular, trans=trans, lower=lower),
              functools.partial(jsl.solve_triangular, trans=trans, lower=lower), backend, t, b)
    check(lambda a, b: msl.solve_triangular(a, b, lower=lower, unit_diagonal=True),
          lambda a, b: jsl.solve_triangular(a, b, lower=lower, unit_diagonal=True), backend, t[0], v)
    for assume_a in ("gen", "sym", "pos"):
        check(functools.partial(msl.solve, assume_a=assume_a, lower=lower),
              functools.partial(jsl.solve, assume_a=assume_a, lower=lower), backend, p, b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scipy_lu_family(rng: np.random.Generator, dtype: Any, backend: str) -> None:
    a, b = general(rng, (2, 4, 4), dtype), rng.standard_normal((2, 4, 3)).astype(dtype)
    check(msl.lu_factor, jsl.lu_factor, backend, a)
    for trans in (0, 1):
        check(lambda a, b, trans=trans: msl.lu_solve(msl.lu_factor(a), b, trans=trans),
              lambda a, b, trans=trans: jsl.lu_solve(jsl.lu_factor(a), b, trans=trans), backend, a, b)
    for shape in ((4, 4), (3, 5), (5, 3)):
        x = rng.standard_normal(shape).astype(dtype)
        check(msl.lu, jsl.lu, backend, x)
        check(lambda x: msl.lu(x, permute_l=True), lambda x: jsl.lu(x, permute_l=True), backend, x)
    check(msl.inv, jsl.inv, backend, a)
    check(msl.det, jsl.det, backend, a)


@pytest.mark.parametrize("backend", ["cpu", "xla"])
def test_scipy_grads(rng: np.random.Generator, backend: str) -> None:
    p, b = spd(rng, (2, 4, 4), np.float32), rng.standard_normal((2, 4, 3)).astype(np.float32)
    cases = [
        (lambda a, b: (msl.solve(a, b, assume_a="pos") ** 2).sum(),
         lambda a, b: (jsl.solve(a, b, assume_a="pos") ** 2).sum()),
        (lambda a, b: (msl.cho_solve(msl.cho_factor(a), b) ** 2).sum(),
         lambda a, b: (jsl.cho_solve(jsl.cho_factor(a), b) ** 2).sum()),
        (lambda a, b: (msl.lu_solve(msl.lu_factor(a), b) ** 2).sum(),
         lambda a, b: (jsl.lu_solve(jsl.lu_factor(a), b) ** 2).sum()),
        (lambda a, b: (msl.solve_triangular(a, b, lower=True) ** 2).sum(),
         lambda a, b: (jsl.solve_triangular(a, b, lower=True) ** 2).sum()),
    ]
    for fn, jax_fn in cases:
        got = mlax.jit(mlax.grad(fn, argnums=(0, 1)), backend=backend)(p, b)
        assert_same(got, jax.grad(jax_fn, argnums=(0, 1))(p, b), rtol=1e-3, atol=1e-3)


def test_scipy_errors() -> None:
    with pytest.raises(ValueError, match="assume_a"):
        msl.solve(np.eye(2, dtype=np.float32), np.ones(2, np.float32), assume_a="banded")
    with pytest.raises(ValueError, match="trans"):
        msl.solve_triangular(np.eye(2, dtype=np.float32), np.ones(2, np.float32), trans=3)
    with pytest.raises(ValueError, match="Unknown slogdet method"):
        mnp.linalg.slogdet(np.eye(2, dtype=np.float32), method="svd")
