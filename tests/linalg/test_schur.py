"""mlax.lax.linalg.schur and mlax.scipy.linalg's schur, rsf2csf, sqrtm, funm and solve_sylvester
against jax: values, NaN patterns and dtypes eagerly (the interpreter: SciPy's ?gees), on the
native CPU backend (LAPACKE ?gees) and on XLA (jaxlib's gees custom call); batched; vmap; the
refusals jax makes (sorting, derivatives, blocked sqrtm) and its errors.

The three roads call the LAPACK routine jax calls with the same workspace, so T and Z are
jax's to the last bit (asserted exactly), Schur vectors' signs and phases included; the
factorization is also checked directly (Z T Z^H = A, Z unitary, T's (quasi) triangular shape).
"""

from __future__ import annotations

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
TOL = {"float32": 2e-4, "float64": 1e-10, "complex64": 2e-4, "complex128": 1e-10}




def ill_conditioned(rng: np.random.Generator, n: int, dtype: Any) -> np.ndarray:
    """V diag(w) V^-1 with eigenvalues spread over 6 decades, two nearly equal, and V far from
    orthogonal (condition number ~1e3)."""
    w = np.geomspace(1e-3, 1e3, n) * rng.choice([-1.0, 1.0], n)
    w[1] = w[0] * (1 + 1e-5)
    v = random_normal(rng, (n, n), dtype) + 30 * np.triu(np.ones((n, n)), 1)
    return (v @ np.diag(w) @ np.linalg.inv(v)).astype(dtype)


@pytest.fixture(params=["float32", "complex64", "float64", "complex128"])
def dtype(request: pytest.FixtureRequest) -> str:
    if request.param in ("float64", "complex128"):
        request.getfixturevalue("x64")
    return request.param


def assert_schur_form(a: np.ndarray, t: np.ndarray, z: np.ndarray, tol: float) -> None:
    """Z T Z^H = A, Z unitary, T upper triangular (complex) or quasi-triangular with standard
    2x2 blocks (real: equal diagonal, off-diagonals of opposite signs)."""
    scale = max(1.0, float(np.max(np.abs(a))))
    eye = np.broadcast_to(np.eye(a.shape[-1]), a.shape)
    z_h = np.conj(np.swapaxes(z, -1, -2))
    np.testing.assert_allclose(z @ t @ z_h, a, atol=tol * scale * a.shape[-1])
    np.testing.assert_allclose(z_h @ z, eye, atol=tol * a.shape[-1])
    below = np.tril(t, -2) if t.dtype.kind == "f" else np.tril(t, -1)
    assert not np.any(below)
    if t.dtype.kind == "f":
        sub = np.diagonal(t, -1, -2, -1)
        assert not np.any((sub[..., 1:] != 0) & (sub[..., :-1] != 0))  # 2x2 blocks never overlap
        for k in zip(*np.nonzero(sub), strict=True):
            *batch, i = k
            block = t[(*batch, slice(i, i + 2), slice(i, i + 2))]
            assert block[0, 0] == block[1, 1] and block[0, 1] * block[1, 0] < 0


# --- the primitive -------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("conditioning", ["random", "ill"])
def test_schur_matches_jax(rng: np.random.Generator, dtype: str, backend: str, conditioning: str) -> None:
    if conditioning == "random":
        a = random_normal(rng, (3, 6, 6), dtype)
    else:
        a = np.stack([ill_conditioned(rng, 6, dtype) for _ in range(2)])
    t, z = run(lambda a: mlinalg.schur(a), backend, a)
    expected_t, expected_z = jax.lax.linalg.schur(a)
    assert_same([t, z], [expected_t, expected_z], rtol=0, atol=0)
    assert_schur_form(a.astype(np.complex128), np.asarray(t), np.asarray(z), TOL[dtype])
    (t_only,) = run(lambda a: mlinalg.schur(a, compute_schur_vectors=False), backend, a)
    assert_same(t_only, jax.lax.linalg.schur(a, compute_schur_vectors=False)[0], rtol=0, atol=0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(3, 0, 0), (0, 4, 4), (1, 1), (2, 1, 2, 2)])
def test_shapes_and_failures(rng: np.random.Generator, backend: str, shape: tuple[int, ...]) -> None:
    a = random_normal(rng, shape, np.float32)
    assert_same(run(lambda a: mlinalg.schur(a), backend, a), jax.lax.linalg.schur(a), rtol=0, atol=0)
    nan = np.full((2, 3, 3), np.nan, np.float32)
    nan[0] = random_normal(rng, (3, 3), np.float32)
    got = run(lambda a: mlinalg.schur(a), backend, nan)
    for g, e in zip(got, jax.lax.linalg.schur(nan), strict=True):
        np.testing.assert_array_equal(np.isnan(np.asarray(g)), np.isnan(np.asarray(e)))
        np.testing.assert_array_equal(np.asarray(g)[0], np.asarray(e)[0])


@pytest.mark.parametrize("backend", ["eager", "cpu", "xla"])
def test_vmap(rng: np.random.Generator, backend: str) -> None:
    a = random_normal(rng, (4, 3, 4), np.complex64)
    f = mlax.vmap(lambda a: mlinalg.schur(a), in_axes=1, out_axes=0)
    expected = jax.vmap(lambda a: jax.lax.linalg.schur(a), in_axes=1, out_axes=0)(a)
    assert_same(run(f, backend, a), expected, rtol=0, atol=0)


def test_refusals_and_errors(rng: np.random.Generator) -> None:
    a = random_normal(rng, (3, 3), np.float32)
    with pytest.raises(NotImplementedError, match="sort feature of LAPACK's gees"):
        mlinalg.schur(a, sort_eig_vals=True)
    assert_same(mlinalg.schur(a, select_callable=lambda *_: True), jax.lax.linalg.schur(a), rtol=0, atol=0)
    with pytest.raises(ValueError, match="square"):
        mlinalg.schur(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="element type"):
        mlinalg.schur(np.ones((2, 2), np.int32))
    with pytest.raises(TypeError, match="rank at least 2"):
        mlinalg.schur(np.ones(3, np.float32))
    # jax has no derivative of schur, nor of what is built on it: NotImplementedError there; the
    # same message from mlax-autodiff here (a pass failure, so mlax's ValueError).
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'schur'"):
        jax.grad(lambda a: jnp.sum(jnp.real(jsl.sqrtm(a))))(a)
    for f in (lambda a: mnp.sum(mlinalg.schur(a)[0]), lambda a: mnp.sum(mnp.real(msl.sqrtm(a)))):
        with pytest.raises(ValueError, match="Differentiation rule for 'schur' not implemented"):
            mlax.grad(f)(a)
    # without a tangent reaching it, schur is a plain primal op under grad
    grad = mlax.grad(lambda x, a: x * mnp.sum(mlinalg.schur(a)[0]))(np.float32(2.0), a)
    np.testing.assert_allclose(grad, np.sum(jax.lax.linalg.schur(a)[0]), rtol=1e-5)


# --- jax.scipy.linalg --------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_scipy_schur_and_rsf2csf(rng: np.random.Generator, dtype: str, backend: str) -> None:
    a = random_normal(rng, (2, 5, 5), dtype)
    for output in ("real", "complex"):
        got = run(lambda a, output=output: msl.schur(a, output=output), backend, a)
        assert_same(got, jsl.schur(a, output=output), rtol=0, atol=0)
    if np.dtype(dtype).kind == "f":
        t, z = jsl.schur(a)
        got = run(msl.rsf2csf, backend, t, z)
        expected = jsl.rsf2csf(t, z)
        assert_same(got, expected, rtol=TOL[dtype], atol=TOL[dtype])
        assert_schur_form(a.astype(np.complex128), *map(np.asarray, got), TOL[dtype])
        # Z broadcast against a batch of T
        assert_same(run(msl.rsf2csf, backend, t, z[0]), jsl.rsf2csf(t, z[0]), rtol=TOL[dtype],
                    atol=TOL[dtype])


def test_scipy_schur_types_and_errors() -> None:
    ints = np.array([[1, 2], [-3, 4]], np.int32)
    assert_same(msl.schur(ints, output="complex"), jsl.schur(ints, output="complex"), rtol=0, atol=0)
    assert_same(msl.rsf2csf(ints, ints), jsl.rsf2csf(ints, ints), rtol=1e-6)
    with pytest.raises(ValueError, match="'real' or 'complex'"):
        msl.schur(ints, output="full")
    with pytest.raises(TypeError, match="element type"):
        msl.schur(ints)
    with pytest.raises(ValueError, match="'T' must be square"):
        msl.rsf2csf(np.ones((2, 3)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="shapes must match"):
        msl.rsf2csf(np.ones((3, 3)), np.ones((2, 2)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_sqrtm(rng: np.random.Generator, dtype: str, backend: str) -> None:
    tol = 50 * TOL[dtype]
    a = random_normal(rng, (5, 5), dtype)
    got = run(msl.sqrtm, backend, a)
    assert_same(got, jsl.sqrtm(a), rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(got) @ np.asarray(got), a, rtol=tol, atol=tol)
    # singular: a repeated zero eigenvalue (jax's zero where the recurrence meets 0/0)
    singular = np.diag(np.array([0.0, 0.0, 4.0, 9.0])).astype(dtype)
    singular[0, 2] = 1.0
    assert_same(run(msl.sqrtm, backend, singular), jsl.sqrtm(singular), rtol=tol, atol=tol)
    spd = a @ np.conj(a.T) + np.eye(5, dtype=dtype)  # positive definite: a root with real eigenvalues
    assert_same(run(msl.sqrtm, backend, spd), jsl.sqrtm(spd), rtol=tol, atol=tol)


def test_sqrtm_types_and_errors() -> None:
    ints = np.array([[4, 1], [0, 9]], np.int32)
    assert_same(msl.sqrtm(ints), jsl.sqrtm(ints), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="Blocked version"):
        msl.sqrtm(ints, blocksize=2)
    with pytest.raises(ValueError, match="square matrix"):
        msl.sqrtm(np.ones((2, 3, 3), np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_funm(rng: np.random.Generator, dtype: str, backend: str) -> None:
    tol = 100 * TOL[dtype]
    a = (0.5 * random_normal(rng, (5, 5), dtype)).astype(dtype)
    for mlax_fn, jax_fn in ((mnp.exp, jnp.exp), (lambda x: mnp.sin(x) + 2 * mnp.cos(x),
                                                  lambda x: jnp.sin(x) + 2 * jnp.cos(x))):
        got = run(lambda a, f=mlax_fn: msl.funm(a, f), backend, a)
        assert_same(got, jsl.funm(a, jax_fn), rtol=tol, atol=tol)
        f, err = run(lambda a, f=mlax_fn: msl.funm(a, f, disp=False), backend, a)
        expected_f, expected_err = jsl.funm(a, jax_fn, disp=False)
        assert_same(f, expected_f, rtol=tol, atol=tol)
        assert_same(err, expected_err, rtol=1e-3)
    np.testing.assert_allclose(msl.funm(a, mnp.exp), jsl.expm(a), rtol=tol, atol=tol)


def test_funm_errors() -> None:
    with pytest.raises(ValueError, match="expected square array_like input"):
        msl.funm(np.ones((2, 2, 2), np.float32), mnp.exp)
    assert_same(msl.funm(np.full((1, 1), 2.0, np.float32), mnp.exp),
                jsl.funm(np.full((1, 1), 2.0, np.float32), jnp.exp), rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", ["schur", "eigen"])
def test_solve_sylvester(rng: np.random.Generator, dtype: str, backend: str, method: str) -> None:
    tol = 50 * TOL[dtype]
    a, b = random_normal(rng, (2, 4, 4), dtype), random_normal(rng, (3, 3), dtype)
    c = random_normal(rng, (3, 1, 4, 3), dtype)
    got = run(lambda a, b, c: msl.solve_sylvester(a, b, c, method=method), backend, a, b, c)
    expected = jsl.solve_sylvester(a, b, c, method=method)
    assert_same(got, expected, rtol=tol, atol=tol)
    x = np.asarray(got)
    np.testing.assert_allclose(a @ x + x @ b, np.broadcast_to(c, x.shape), rtol=tol, atol=tol)
    # A and -B share an eigenvalue: NaN, as jax
    shared = np.diag(np.arange(1.0, 4.0)).astype(dtype)
    nan = run(lambda a, b, c: msl.solve_sylvester(a, b, c, method=method), backend, shared, -shared,
              c[0, 0, :3])
    assert np.all(np.isnan(np.asarray(nan)))


def test_solve_sylvester_types_and_errors(rng: np.random.Generator) -> None:
    ints = rng.integers(-3, 4, (3, 3)).astype(np.int32) + 10 * np.eye(3, dtype=np.int32)
    assert_same(msl.solve_sylvester(ints, ints, ints), jsl.solve_sylvester(ints, ints, ints), rtol=1e-4,
                atol=1e-5)
    real, cplx = random_normal(rng, (3, 3), np.float32), random_normal(rng, (3, 3), np.complex64)
    assert_same(msl.solve_sylvester(real, real, cplx), jsl.solve_sylvester(real, real, cplx), rtol=1e-3,
                atol=1e-4)
    with pytest.raises(ValueError, match="Incompatible shapes for Sylvester"):
        msl.solve_sylvester(real, real, np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match="Unrecognized method"):
        msl.solve_sylvester(real, real, real, method="qz")
