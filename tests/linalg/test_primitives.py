"""mlax.lax.linalg's cholesky, triangular_solve, lu and lu_pivots_to_permutation against jax.lax.linalg:
values, NaN/inf patterns and dtypes, eagerly (the interpreter) and under jit on the native CPU
backend (LAPACK) and on XLA (jaxlib's LAPACK custom calls); batched; derivatives against jax and
against finite differences in float64; vmap against jax.vmap."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import mlax
from mlax.lax import linalg as mlinalg
from tests.oracle import assert_same, run

jlinalg = jax.lax.linalg
BACKENDS = ["eager", "cpu", "xla"]
TOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12, np.dtype(np.complex64): 2e-5,
       np.dtype(np.complex128): 1e-12}



def check(fn: Callable[..., Any], jax_fn: Callable[..., Any], backend: str, *args: Any,
          scale: float = 1.0) -> None:
    dtype = np.result_type(*args)
    assert_same(run(fn, backend, *args), jax_fn(*args), rtol=TOL[dtype], atol=TOL[dtype] * scale)


def spd(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Well-conditioned symmetric positive-definite matrices."""
    x = rng.standard_normal(shape)
    return (x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def triangular(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Matrices whose triangles are well conditioned (a dominant diagonal)."""
    x = rng.uniform(-1, 1, shape)
    return (x + 2 * shape[-1] * np.eye(shape[-1]) * rng.choice([-1, 1], shape[:-1])[..., None]).astype(dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5, 5), (3, 0, 0), (1, 1)])
def test_cholesky(rng: np.random.Generator, dtype: Any, backend: str, shape: tuple[int, ...]) -> None:
    a = spd(rng, shape, dtype) + rng.uniform(-0.1, 0.1, shape).astype(dtype)  # not symmetric: symmetrized
    check(mlinalg.cholesky, jlinalg.cholesky, backend, a, scale=10)
    check(lambda x: mlinalg.cholesky(x, symmetrize_input=False),
          lambda x: jlinalg.cholesky(x, symmetrize_input=False), backend, a, scale=10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cholesky_of_matrices_not_positive_definite_is_nan(rng: np.random.Generator, backend: str) -> None:
    """jax's pattern: NaN in the lower triangle of the failed matrices only, zeros above."""
    a = spd(rng, (3, 4, 4), np.float32)
    a[1, 2, 2] = -50.0
    a[2] = -a[2]
    out = np.asarray(run(mlinalg.cholesky, backend, a))
    expected = np.asarray(jlinalg.cholesky(a))
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
    assert np.isnan(out[1:]).any() and not np.isnan(out[0]).any()
    assert_same(out, expected, rtol=1e-5, atol=1e-5)


FLAGS = [dict(left_side=l, lower=lo, transpose_a=t, unit_diagonal=u)
         for l in (True, False) for lo in (True, False) for t in (True, False) for u in (True, False)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: "".join(k[0] if v else "_" for k, v in f.items()))
def test_triangular_solve(rng: np.random.Generator, backend: str, flags: dict[str, bool]) -> None:
    a = triangular(rng, (2, 4, 4), np.float32)
    b = rng.standard_normal((2, 4, 3) if flags["left_side"] else (2, 3, 4)).astype(np.float32)
    check(lambda a, b: mlinalg.triangular_solve(a, b, **flags),
          lambda a, b: jlinalg.triangular_solve(a, b, **flags), backend, a, b, scale=10)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("left_side", [True, False])
def test_triangular_solve_f64_vectors_and_batches(rng: np.random.Generator, x64: None, backend: str,
                                                  left_side: bool) -> None:
    a = triangular(rng, (3, 2, 5, 5), np.float64)
    matrix = rng.standard_normal((3, 2, 5, 2) if left_side else (3, 2, 2, 5))
    vector = rng.standard_normal((3, 2, 5))  # one rank less: jax's singleton column or row
    for b in (matrix, vector):
        check(lambda a, b: mlinalg.triangular_solve(a, b, left_side=left_side, lower=True, transpose_a=True),
              lambda a, b: jlinalg.triangular_solve(a, b, left_side=left_side, lower=True, transpose_a=True),
              backend, a, b, scale=10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_triangular_solve_singular_gives_jaxs_infs(backend: str) -> None:
    a = np.array([[2.0, 0.0], [1.0, 0.0]], np.float32)
    b = np.array([[1.0], [1.0]], np.float32)
    out = run(lambda a, b: mlinalg.triangular_solve(a, b, left_side=True, lower=True), backend, a, b)
    assert_same(out, jlinalg.triangular_solve(a, b, left_side=True, lower=True))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 6), (2, 6, 4), (2, 0, 3), (1, 1)])
def test_lu(rng: np.random.Generator, dtype: Any, backend: str, shape: tuple[int, ...]) -> None:
    x = rng.standard_normal(shape).astype(dtype)
    check(mlinalg.lu, jlinalg.lu, backend, x, scale=10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lu_of_a_singular_matrix(backend: str) -> None:
    x = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], np.float32)
    assert_same(run(mlinalg.lu, backend, x), jlinalg.lu(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_lu_pivots_to_permutation(rng: np.random.Generator, backend: str) -> None:
    pivots = np.stack([rng.integers(i, 6, size=(2, 3)) for i in range(4)], axis=-1).astype(np.int32)
    assert_same(run(lambda p: mlinalg.lu_pivots_to_permutation(p, 6), backend, pivots),
                jlinalg.lu_pivots_to_permutation(pivots, 6))


def test_errors_are_jaxs_kind() -> None:
    with pytest.raises(TypeError, match="f32, f64, complex64 or complex128"):
        mlinalg.cholesky(np.eye(3, dtype=np.int32), symmetrize_input=False)
    with pytest.raises(ValueError, match="square"):
        mlinalg.cholesky(np.ones((2, 3), np.float32), symmetrize_input=False)
    with pytest.raises(ValueError, match="incompatible shapes"):
        mlinalg.triangular_solve(np.eye(3, dtype=np.float32), np.ones((2, 2), np.float32), left_side=True)
    with pytest.raises(TypeError, match="number of batch dimensions"):
        mlinalg.triangular_solve(np.eye(3, dtype=np.float32), np.ones((2, 2, 3, 3), np.float32))
    with pytest.raises(ValueError, match="permutation size"):
        mlinalg.lu_pivots_to_permutation(np.zeros(4, np.int32), 2)


# --- derivatives and batching ---------------------------------------------------------------------

def _weights(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def _cases(rng: np.random.Generator, dtype: Any) -> list[tuple[str, Callable, Callable, list[np.ndarray]]]:
    """(name, mlax function, jax function, arguments): scalar functions of the primitives."""
    w_chol, w_lu = _weights(rng, (2, 4, 4), dtype), _weights(rng, (2, 4, 5), dtype)
    w_ts = _weights(rng, (2, 4, 3), dtype)
    flags = dict(left_side=True, lower=False, transpose_a=True)
    return [
        ("cholesky", lambda x: (mlinalg.cholesky(x) * w_chol).sum(),
         lambda x: (jlinalg.cholesky(x) * w_chol).sum(), [spd(rng, (2, 4, 4), dtype)]),
        ("triangular_solve", lambda a, b: (mlinalg.triangular_solve(a, b, **flags) ** 2 * w_ts).sum(),
         lambda a, b: (jlinalg.triangular_solve(a, b, **flags) ** 2 * w_ts).sum(),
         [triangular(rng, (2, 4, 4), dtype), _weights(rng, (2, 4, 3), dtype)]),
        ("lu", lambda x: (mlinalg.lu(x)[0] * w_lu).sum(), lambda x: (jlinalg.lu(x)[0] * w_lu).sum(),
         [rng.standard_normal((2, 4, 5)).astype(dtype)]),
    ]


@pytest.mark.parametrize("backend", ["cpu", "xla"])
@pytest.mark.parametrize("case", range(3), ids=["cholesky", "triangular_solve", "lu"])
def test_grad_against_jax(rng: np.random.Generator, backend: str, case: int) -> None:
    _, fn, jax_fn, args = _cases(rng, np.float32)[case]
    argnums = tuple(range(len(args)))
    got = mlax.jit(mlax.grad(fn, argnums=argnums), backend=backend)(*args)
    assert_same(got, jax.grad(jax_fn, argnums=argnums)(*args), rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("case", range(3), ids=["cholesky", "triangular_solve", "lu"])
def test_grad_against_finite_differences(rng: np.random.Generator, x64: None, case: int) -> None:
    _, fn, _, args = _cases(rng, np.float64)[case]
    grads = mlax.jit(mlax.grad(fn, argnums=tuple(range(len(args)))))(*args)
    eps = 1e-6
    for i, (arg, grad) in enumerate(zip(args, grads, strict=True)):
        direction = rng.standard_normal(arg.shape)
        if case == 0:  # stay symmetric: the factor reads a symmetrized matrix
            direction = direction + np.swapaxes(direction, -1, -2)
        shifted = [list(args), list(args)]
        shifted[0][i], shifted[1][i] = arg + eps * direction, arg - eps * direction
        numeric = (float(fn(*shifted[0])) - float(fn(*shifted[1]))) / (2 * eps)
        np.testing.assert_allclose(np.sum(np.asarray(grad) * direction), numeric, rtol=1e-6)


@pytest.mark.parametrize("backend", ["cpu", "xla"])
def test_jvp_of_every_lu_result(rng: np.random.Generator, backend: str) -> None:
    x, t = (rng.standard_normal((3, 5, 4)).astype(np.float32) for _ in range(2))
    got = mlax.jit(lambda x, t: mlax.jvp(mlinalg.lu, (x,), (t,)), backend=backend)(x, t)
    primals, tangents = jax.jvp(jlinalg.lu, (x,), (t,))
    assert_same(got[0], primals)
    assert_same(got[1][0], tangents[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("backend", ["cpu", "xla"])
def test_vmap(rng: np.random.Generator, backend: str) -> None:
    a, m = spd(rng, (3, 2, 4, 4), np.float32), triangular(rng, (4, 4), np.float32)
    b = rng.standard_normal((3, 4, 2)).astype(np.float32)
    cases = [
        (lambda a: mlinalg.cholesky(a), lambda a: jlinalg.cholesky(a), (a,), 0),
        (lambda b: mlinalg.triangular_solve(m, b, left_side=True, lower=True),
         lambda b: jlinalg.triangular_solve(m, b, left_side=True, lower=True), (b,), 0),
        (lambda b: mlinalg.triangular_solve(m, b, left_side=False, lower=True),
         lambda b: jlinalg.triangular_solve(m, b, left_side=False, lower=True), (np.swapaxes(b, 1, 2),), 0),
        (mlinalg.lu, jlinalg.lu, (a,), 1),
    ]
    for fn, jax_fn, args, axis in cases:
        got = mlax.jit(mlax.vmap(fn, in_axes=axis), backend=backend)(*args)
        assert_same(got, jax.vmap(jax_fn, in_axes=axis)(*args), rtol=1e-5, atol=1e-5)
