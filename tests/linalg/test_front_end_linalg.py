"""The linear algebra built in the front end on existing ops, against jax: lax.linalg.tridiagonal_solve
(gtsv's pivoting as scans, jax's derivative rules), jnp.linalg tensorsolve/tensorinv and the
functions of jnp.linalg that need no decomposition (matrix_power, multi_dot, outer, cross,
trace, diagonal, matrix_transpose, vecdot, vector_norm, matrix_norm, norm for every ord without
an SVD). Values and dtypes eagerly and under jit on the native and XLA backends; gradients
against jax and finite differences in float64; vmap against jax.vmap. Many functions share one
jitted program, so each backend compiles once."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.lax import linalg as mlinalg
from tests.linalg.test_primitives import BACKENDS
from tests.oracle import assert_same, run

TOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12}


def diagonals(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any,
              dominant: bool) -> list[np.ndarray]:
    """dl, d, du of tridiagonal matrices; not diagonally dominant ones make gtsv swap rows."""
    dl, d, du = (rng.uniform(-1, 1, shape) for _ in range(3))
    if dominant:
        d = d + 3 * np.sign(d)
    return [x.astype(dtype) for x in (dl, d, du)]


# --- tridiagonal_solve ------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m", [1, 2, 6])
def test_tridiagonal_solve(rng: np.random.Generator, dtype: Any, backend: str, m: int) -> None:
    fn = mlinalg.tridiagonal_solve
    for dominant in (True, False):
        dl, d, du = diagonals(rng, (2, 3, m), dtype, dominant)
        b = rng.standard_normal((2, 3, m, 2)).astype(dtype)
        expected = jax.lax.linalg.tridiagonal_solve(dl, d, du, b)
        assert_same(run(fn, backend, dl, d, du, b), expected, rtol=TOL[dtype] * 50, atol=TOL[dtype] * 50)
    singular = [x[0].copy() for x in (dl, d, du)]
    singular[1][:] = 0.0
    singular[0][:] = 0.0
    expected = np.asarray(jax.lax.linalg.tridiagonal_solve(*singular, b[0]))
    assert np.isnan(expected).all() and np.isnan(np.asarray(run(fn, backend, *singular, b[0]))).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_tridiagonal_solve_complex(rng: np.random.Generator, backend: str) -> None:
    """cgtsv pivots on |re| + |im|."""
    dl, d, du, b = ((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
                    for shape in ((2, 5), (2, 5), (2, 5), (2, 5, 2)))
    got = np.asarray(run(mlinalg.tridiagonal_solve, backend, dl, d, du, b))
    expected = np.asarray(jax.lax.linalg.tridiagonal_solve(dl, d, du, b))
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("backend", ["cpu", "xla"])
def test_tridiagonal_solve_derivatives(rng: np.random.Generator, backend: str) -> None:
    dl, d, du = diagonals(rng, (3, 5), np.float32, dominant=False)
    b, w = (rng.standard_normal((3, 5, 2)).astype(np.float32) for _ in range(2))
    tangents = tuple(rng.standard_normal(x.shape).astype(np.float32) for x in (dl, d, du, b))

    def derivatives(solve: Any, jvp: Any, grad: Any, vmap: Any) -> Any:
        """grad in every operand, jvp, vmap over b alone, vmap of grad: one program."""
        loss = lambda *args: (solve(*args) * w).sum() ** 2  # noqa: E731
        return lambda dl, d, du, b, t: (grad(loss, argnums=(0, 1, 2, 3))(dl, d, du, b),
                                        jvp(solve, (dl, d, du, b), t),
                                        vmap(solve, in_axes=(None, None, None, 0))(dl, d, du, b[None]),
                                        vmap(grad(loss, argnums=1))(dl, d, du, b))

    got = mlax.jit(derivatives(mlinalg.tridiagonal_solve, mlax.jvp, mlax.grad, mlax.vmap), backend=backend)
    expected = derivatives(jax.lax.linalg.tridiagonal_solve, jax.jvp, jax.grad, jax.vmap)
    assert_same(got(dl, d, du, b, tangents), expected(dl, d, du, b, tangents), rtol=1e-3, atol=1e-3)


def test_tridiagonal_solve_grad_against_finite_differences(rng: np.random.Generator, x64: None) -> None:
    args = [*diagonals(rng, (6,), np.float64, dominant=False), rng.standard_normal((6, 2))]
    w = rng.standard_normal((6, 2))
    loss = lambda *args: (mlinalg.tridiagonal_solve(*args) * w).sum() ** 2  # noqa: E731
    value_and_grad = mlax.jit(mlax.value_and_grad(loss, argnums=(0, 1, 2, 3)))
    grads = value_and_grad(*args)[1]
    value = lambda *args: value_and_grad(*args)[0]  # noqa: E731  (one program for both)
    for i, grad in enumerate(grads):
        direction, eps = rng.standard_normal(args[i].shape), 1e-6
        plus, minus = list(args), list(args)
        plus[i], minus[i] = args[i] + eps * direction, args[i] - eps * direction
        numeric = (float(value(*plus)) - float(value(*minus))) / (2 * eps)
        np.testing.assert_allclose(np.sum(np.asarray(grad) * direction), numeric, rtol=1e-6)


def test_tridiagonal_solve_errors() -> None:
    v, b = np.ones(3, np.float32), np.ones((3, 1), np.float32)
    with pytest.raises(TypeError, match="same shape"):
        mlinalg.tridiagonal_solve(v[:2], v, v, b)
    with pytest.raises(TypeError, match="leading ndim-1"):
        mlinalg.tridiagonal_solve(v, v, v, np.ones((4, 1), np.float32))


# --- jnp.linalg without decompositions ----------------------------------------------------------------


def linalg_suite(a: Any, v: Any, t: Any, xp: Any) -> dict[str, Any]:
    """Every non-decomposition function of ``xp.linalg`` on ``a`` (2, 3, 4, 4), ``v`` (2, 3, 4)
    and ``t`` (12, 12), in one program."""
    la = xp.linalg
    out = {f"matrix_power{n}": la.matrix_power(a, n) for n in (-3, -1, 0, 1, 2, 3, 6)}
    out |= {
        "multi_dot": la.multi_dot([v[0, 0], a[0, 0], a[0, 1], a[1, 0][:, :3]]),
        "outer": la.outer(v[0, 0], v[1, 1, :3]),
        "cross": la.cross(v[..., :3], v[::-1, :, 1:]),
        "trace": la.trace(a, offset=1), "diagonal": la.diagonal(a, offset=-1),
        "matrix_transpose": la.matrix_transpose(a), "vecdot": la.vecdot(v, v[::-1]),
        "vecdot_axis": la.vecdot(a, a, axis=-2),
        "tensorinv": la.tensorinv(t.reshape(3, 4, 2, 6)),
        "tensorinv1": la.tensorinv(t.reshape(12, 3, 4), ind=1),
        "tensorsolve": la.tensorsolve(t.reshape(3, 4, 2, 6), v[0]),
        "tensorsolve_axes": la.tensorsolve(t.reshape(2, 6, 3, 4), v[0], axes=(0, 1)),
        "norm": la.norm(a), "norm_axis": la.norm(a, axis=(0, 2)),
    }
    for ord_ in (None, 2, 1, -1, np.inf, -np.inf, 0, 3, 0.5, -2):
        out[f"vector_norm{ord_}"] = la.vector_norm(a, ord=ord_, axis=(0, 2), keepdims=True)
        out[f"norm_vector{ord_}"] = la.norm(v, ord=ord_, axis=-1)
    for ord_ in ("fro", "f", 1, -1, np.inf, -np.inf):
        out[f"matrix_norm{ord_}"] = la.matrix_norm(a, ord=ord_)
        out[f"norm_matrix{ord_}"] = la.norm(a, ord=ord_, axis=(3, 1), keepdims=True)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_linalg_without_decompositions(rng: np.random.Generator, dtype: Any, backend: str) -> None:
    a = (rng.standard_normal((2, 3, 4, 4)) / 2 + np.eye(4)).astype(dtype)
    v = rng.standard_normal((2, 3, 4)).astype(dtype)
    t = (rng.standard_normal((12, 12)) + 4 * np.eye(12)).astype(dtype)
    got = run(lambda a, v, t: linalg_suite(a, v, t, mnp), backend, a, v, t)
    assert_same(got, linalg_suite(a, v, t, jnp), rtol=TOL[dtype] * 20, atol=TOL[dtype] * 20)


def test_complex_products_and_norms(rng: np.random.Generator) -> None:
    """jnp conjugates the first operand of vecdot/vdot and squares |x| as real(x * conj(x))."""
    c = (rng.standard_normal((2, 4, 4)) + 1j * rng.standard_normal((2, 4, 4))).astype(np.complex64)

    def suite(c: Any, xp: Any) -> dict[str, Any]:
        la = xp.linalg
        return {"vecdot": la.vecdot(c, c[::-1]), "vdot": xp.vdot(c[0], c[1]), "norm": la.norm(c),
                "vector_norm": la.vector_norm(c, axis=-1), "norm3": la.norm(c, ord=3, axis=-1),
                "fro": la.matrix_norm(c), "norm1": la.norm(c, ord=1, axis=(1, 2)),
                "matrix_power": la.matrix_power(c, 5), "outer": la.outer(c[0, 0], c[1, 1])}

    expected = suite(c, jnp)
    for got in (suite(c, mnp), mlax.jit(lambda c: suite(c, mnp))(c)):
        assert jax.tree.structure(got) == jax.tree.structure(expected)
        for key, value in expected.items():
            assert np.asarray(got[key]).dtype == value.dtype, key
            np.testing.assert_allclose(np.asarray(got[key]), value, rtol=1e-5, atol=1e-5, err_msg=key)


@pytest.mark.parametrize("backend", ["cpu", "xla"])
def test_numpy_linalg_grad_and_vmap(rng: np.random.Generator, backend: str) -> None:
    a = (rng.standard_normal((2, 3, 4, 4)) / 2 + np.eye(4)).astype(np.float32)
    v = rng.standard_normal((2, 3, 4)).astype(np.float32)
    t = (rng.standard_normal((12, 12)) + 4 * np.eye(12)).astype(np.float32)
    differentiated = ("matrix_power-1", "matrix_power6", "multi_dot", "cross", "vecdot", "tensorsolve",
                      "norm", "vector_norm3", "vector_norm-inf", "norm_vectorNone", "matrix_normfro",
                      "norm_matrix1")

    def loss(xp: Any) -> Any:
        def total(a: Any, v: Any, t: Any) -> Any:
            suite = linalg_suite(a, v, t, xp)  # what the keys do not pick, dead code elimination drops
            return sum(xp.sum(suite[key]) for key in differentiated)

        return total

    def both(xp: Any, grad: Any, vmap: Any) -> Any:
        return lambda a, v, t: (grad(loss(xp), argnums=(0, 1, 2))(a, v, t),
                                vmap(lambda a: xp.linalg.matrix_power(a, -2))(a[0]))

    got = mlax.jit(both(mnp, mlax.grad, mlax.vmap), backend=backend)(a, v, t)
    assert_same(got, both(jnp, jax.grad, jax.vmap)(a, v, t), rtol=2e-3, atol=2e-3)


def test_numpy_linalg_grad_against_finite_differences(rng: np.random.Generator, x64: None) -> None:
    t = rng.standard_normal((12, 12)) + 4 * np.eye(12)
    b = rng.standard_normal((3, 4))

    def loss(t: Any) -> Any:
        la = mnp.linalg
        return ((la.tensorsolve(t.reshape(3, 4, 2, 6), b) ** 2).sum() + la.matrix_power(t, -3).sum()
                + la.tensorinv(t.reshape(3, 4, 12)).sum() + la.norm(t, ord=3, axis=0).sum()
                + la.matrix_norm(t, ord=1))

    value_and_grad = mlax.jit(mlax.value_and_grad(loss))
    grad = np.asarray(value_and_grad(t)[1])
    value, direction, eps = lambda t: value_and_grad(t)[0], rng.standard_normal(t.shape), 1e-6
    numeric = (float(value(t + eps * direction)) - float(value(t - eps * direction))) / (2 * eps)
    np.testing.assert_allclose(np.sum(grad * direction), numeric, rtol=1e-6)


def test_tensor_errors() -> None:
    with pytest.raises(ValueError, match="ind must be a positive"):
        mnp.linalg.tensorinv(np.eye(4, dtype=np.float32), ind=0)
    with pytest.raises(ValueError, match="product of the first"):
        mnp.linalg.tensorinv(np.ones((2, 3), np.float32), ind=1)
    with pytest.raises(ValueError, match="leading shape of a must match"):
        mnp.linalg.tensorsolve(np.ones((2, 3, 6), np.float32), np.ones((3,), np.float32))
