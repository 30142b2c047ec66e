"""mlax.scipy.linalg's expm, expm_frechet and dft against jax.scipy.linalg: values and dtypes eagerly
(the interpreter) and under jit on the native and XLA backends, f32 and f64, 1-norms that pick
each Pade degree and that need squarings (one compiled program serves them all: the degree and
the squarings are chosen at run time), batched; derivatives against jax and against finite
differences in float64; vmap against jax.vmap."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest

import mlax
import mlax.scipy.linalg as msl
from tests.linalg.test_primitives import BACKENDS
from tests.oracle import assert_same, run

# 1-norms on both sides of each Pade degree's bound (Higham's theta_m in jax's tables), and
# beyond the last one, where the matrix is scaled and squared back.
NORMS = {np.dtype(np.float32): (0.2, 1.0, 3.0, 40.0),
         np.dtype(np.float64): (0.01, 0.1, 0.5, 1.5, 4.0, 60.0)}
TOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12}


def with_norm(rng: np.random.Generator, shape: tuple[int, ...], norm: float, dtype: Any) -> np.ndarray:
    """A random matrix (batch) whose 1-norm (largest column sum of |a|) is ``norm``."""
    x = rng.standard_normal(shape)
    return (x * norm / np.abs(x).sum(axis=-2).max(axis=-1)[..., None, None]).astype(dtype)


def close(got: Any, expected: Any, tol: float) -> None:
    """Same dtype and shape, values close relative to the largest entry (exp grows fast)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    scale = max(float(np.nanmax(np.abs(expected))), 1.0) if expected.size else 1.0
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * scale, equal_nan=True)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [1, 3, 6])
def test_expm(rng: np.random.Generator, dtype: Any, backend: str, n: int) -> None:
    fn = mlax.jit(msl.expm, backend=backend) if backend != "eager" else msl.expm
    for norm in NORMS[dtype]:
        a = with_norm(rng, (n, n), norm, dtype)
        close(fn(a), jsl.expm(a), TOL[dtype] * 10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_expm_batched_triangular_and_too_many_squarings(rng: np.random.Generator, dtype: Any,
                                                         backend: str) -> None:
    a = with_norm(rng, (2, 3, 4, 4), 2.0, dtype)
    a[0, 1] *= 20  # squarings for one matrix of the batch only
    upper = np.triu(a[1])
    big = with_norm(rng, (2, 3, 3), 100.0, dtype)
    big[0] /= 100.0

    def variants(xp: Any) -> Any:
        return lambda a, upper, big: (xp.expm(a), xp.expm(upper, upper_triangular=True),
                                      xp.expm(big, max_squarings=3))

    got = run(variants(msl), backend, a, upper, big)
    for got_one, expected in zip(got, variants(jsl)(a, upper, big), strict=True):
        close(got_one, expected, TOL[dtype] * 10)
    assert np.isnan(got[2][1]).all() and not np.isnan(got[2][0]).any()  # NaN where 3 squarings do not do


@pytest.mark.parametrize("backend", BACKENDS)
def test_expm_complex(rng: np.random.Generator, backend: str) -> None:
    fn = mlax.jit(msl.expm, backend=backend) if backend != "eager" else msl.expm
    for norm in NORMS[np.dtype(np.float32)]:
        x = rng.standard_normal((2, 4, 4)) + 1j * rng.standard_normal((2, 4, 4))
        a = (x * norm / np.abs(x).sum(axis=-2).max(axis=-1)[..., None, None]).astype(np.complex64)
        got, expected = np.asarray(fn(a)), np.asarray(jsl.expm(a))
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=2e-4, atol=2e-4 * max(np.abs(expected).max(), 1.0))


def test_expm_promotes_and_refuses() -> None:
    ints = np.array([[1, 2], [0, 1]], np.int32)
    assert_same(msl.expm(ints), jsl.expm(ints), rtol=1e-6)
    with pytest.raises(ValueError, match="square"):
        msl.expm(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="float16"):
        msl.expm(np.eye(2, dtype=np.float16))
    with pytest.raises(ValueError, match="same shape"):
        msl.expm_frechet(np.eye(2, dtype=np.float32), np.eye(3, dtype=np.float32))


@pytest.mark.parametrize("backend", ["cpu", "xla"])
def test_expm_grad_and_frechet(rng: np.random.Generator, backend: str) -> None:
    """One program differentiates expm at matrices that take three Pade degrees and squarings."""
    w = rng.standard_normal((2, 4, 4)).astype(np.float32)

    def both(xp: Any, grad: Any) -> Any:
        return lambda a, e: (grad(lambda a: (xp.expm(a) * w).sum())(a), *xp.expm_frechet(a, e))

    program = mlax.jit(both(msl, mlax.grad), backend=backend)
    for norm in (0.2, 1.0, 8.0):
        a, e = with_norm(rng, (2, 4, 4), norm, np.float32), rng.standard_normal((2, 4, 4)).astype(np.float32)
        for got, expected in zip(program(a, e), both(jsl, jax.grad)(a, e), strict=True):
            close(got, expected, 1e-4)
    close(msl.expm_frechet(a[0], e[0], compute_expm=False, method="SPS"),
          jsl.expm_frechet(a[0], e[0], compute_expm=False), 1e-4)


def test_expm_grad_against_finite_differences(rng: np.random.Generator, x64: None) -> None:
    loss = lambda a, w: (msl.expm(a) * w).sum()  # noqa: E731
    value_and_grad = mlax.jit(mlax.value_and_grad(loss))
    value = lambda a, w: value_and_grad(a, w)[0]  # noqa: E731  (one program for both)
    for norm in (0.05, 1.2, 30.0):  # Pade degrees 5 and 9, and 13 with squarings
        a, w = with_norm(rng, (4, 4), norm, np.float64), rng.standard_normal((4, 4))
        got = np.asarray(value_and_grad(a, w)[1])
        np.testing.assert_allclose(got, jax.grad(lambda a, w: (jsl.expm(a) * w).sum())(a, w), rtol=1e-10)
        direction, eps = rng.standard_normal(a.shape), 1e-6
        numeric = (float(value(a + eps * direction, w)) - float(value(a - eps * direction, w))) / (2 * eps)
        np.testing.assert_allclose(np.sum(got * direction), numeric, rtol=1e-6)


@pytest.mark.parametrize("backend", ["cpu", "xla"])
def test_expm_vmap(rng: np.random.Generator, backend: str) -> None:
    a = with_norm(rng, (3, 3, 3), 6.0, np.float32) * np.array([0.05, 1.0, 2.0], np.float32)[:, None, None]
    close(mlax.jit(mlax.vmap(msl.expm), backend=backend)(a), jax.vmap(jsl.expm)(a), 1e-4)


# --- dft --------------------------------------------------------------------------------------------


def close_complex(got: Any, expected: Any, tol: float) -> None:
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dft(backend: str, dtype: Any) -> None:
    tol = TOL[dtype] * 100
    for n in (1, 4, 7):
        for scale in (None, "sqrtn", "n"):
            fn = lambda n=n, scale=scale: msl.dft(n, scale)  # noqa: E731
            got = fn() if backend == "eager" else mlax.jit(fn, backend=backend)()
            close_complex(got, jsl.dft(n, scale), tol)
    close_complex(msl.dft(5, dtype=np.complex64), jsl.dft(5, dtype=np.complex64), 1e-5)


def test_dft_errors() -> None:
    with pytest.raises(ValueError, match="scale"):
        msl.dft(4, "ortho")
    with pytest.raises(ValueError, match="complex"):
        msl.dft(4, dtype=np.float32)
    assert np.asarray(msl.dft(3)).dtype == jnp.zeros(0, jsl.dft(3).dtype).dtype
