"""The Householder primitives (mlax.lax.linalg.geqrf, geqp3, householder_product, ormqr, hessenberg,
tridiagonal) and what is built on them (jnp.linalg.qr(mode='raw'), scipy's hessenberg, qr_multiply,
eigh_tridiagonal's eigenvalues) against jax: values and dtypes eagerly (the interpreter), on the
native CPU backend (LAPACKE) and on XLA (jaxlib's custom calls), for f32, f64, complex64 and
complex128, batched and under vmap; derivatives are refused with jax's message, as jax refuses
them. eigh_tridiagonal's eigenvectors: test_tridiagonal_eigenvectors.py."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
from jax._src.lax import linalg as jax_linalg  # geqrf is not in jax.lax.linalg's public names

import mlax
import mlax.numpy as mnp
import mlax.scipy.linalg as msl
from mlax.lax import linalg as mlinalg
from tests.oracle import assert_same, random_normal, run

BACKENDS = ["eager", "cpu", "xla"]
TOL = {"float32": 1e-4, "float64": 1e-10, "complex64": 1e-4, "complex128": 1e-10}




def close(got: Any, expected: Any, dtype: str) -> None:
    assert_same(jax.tree_util.tree_map(np.asarray, got), expected, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.fixture(params=["float32", "complex64", "float64", "complex128"])
def dtype(request: pytest.FixtureRequest) -> str:
    if request.param in ("float64", "complex128"):
        request.getfixturevalue("x64")
    return request.param


# --- the primitives ------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 4), (2, 1, 3, 6)])
def test_geqrf_and_householder_product(rng: np.random.Generator, dtype: str, backend: str,
                                       shape: tuple[int, ...]) -> None:
    a = random_normal(rng, shape, dtype)
    close(run(mlinalg.geqrf, backend, a), jax_linalg.geqrf(a), dtype)
    packed, taus = jax_linalg.geqrf(a)
    k = min(shape[-2:])
    packed = packed[..., :k]  # householder_product needs m >= n
    close(run(mlinalg.householder_product, backend, packed, taus),
          jax.lax.linalg.householder_product(packed, taus), dtype)
    fewer = taus[..., : k - 1]  # fewer reflectors than columns
    close(run(mlinalg.householder_product, backend, packed, fewer),
          jax.lax.linalg.householder_product(packed, fewer), dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 5)])
def test_geqp3(rng: np.random.Generator, dtype: str, backend: str, shape: tuple[int, ...]) -> None:
    a = random_normal(rng, shape, dtype)
    free = np.zeros(shape[:-2] + shape[-1:], np.int32)
    fixed = free.copy()
    fixed[..., -1] = 1  # the last column goes first
    for jpvt in (free, fixed):
        close(run(mlinalg.geqp3, backend, a, jpvt), jax_linalg.geqp3(a, jpvt), dtype)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ormqr(rng: np.random.Generator, dtype: str, backend: str) -> None:
    """Q c, Q^H c, c Q, c Q^H (one program) for tall, wide and batched reflectors, all or fewer
    of them: LAPACK's ?ormqr / ?unmqr, so jax's bits."""
    for shape, k, columns in (((2, 5, 3), 3, 2), ((3, 4), 2, 1), ((2, 1, 4, 4), 4, 3)):
        packed, taus = jax_linalg.geqrf(random_normal(rng, shape, dtype))
        taus = taus[..., :k]
        c_left = random_normal(rng, (*shape[:-1], columns), dtype)
        c_right = random_normal(rng, (*shape[:-2], columns, shape[-2]), dtype)

        def products(ormqr: Any) -> Any:
            return lambda a, t, cl, cr: [ormqr(a, t, cl if left else cr, left=left, transpose=transpose)
                                         for left in (True, False) for transpose in (False, True)]

        got = run(products(mlinalg.ormqr), backend, packed, taus, c_left, c_right)
        assert_same(got, products(jax.lax.linalg.ormqr)(packed, taus, c_left, c_right), rtol=0.0)
    a = np.ones((4, 3), np.float32)
    assert [e.primitive.name for e in mlax.make_jaxpr(mlinalg.ormqr)(a, a[0], a).jaxpr.eqns] == ["ormqr"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(2, 5, 5), (1, 1), (3, 2, 4, 4)])
def test_hessenberg(rng: np.random.Generator, dtype: str, backend: str, shape: tuple[int, ...]) -> None:
    a = random_normal(rng, shape, dtype)
    close(run(mlinalg.hessenberg, backend, a), jax.lax.linalg.hessenberg(a), dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal(rng: np.random.Generator, dtype: str, backend: str, lower: bool) -> None:
    for shape in [(2, 5, 5), (1, 1)]:
        a = random_normal(rng, shape, dtype)  # not Hermitian: only one triangle is read
        got = run(lambda x: mlinalg.tridiagonal(x, lower=lower), backend, a)
        close(got, jax.lax.linalg.tridiagonal(a, lower=lower), dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float64", "complex64"])
def test_blocked_sizes(rng: np.random.Generator, x64: None, backend: str, dtype: str) -> None:
    """Past LAPACK's crossover to blocked code (~128): jax's bits, so the same optimal workspace."""
    a, s = random_normal(rng, (150, 140), dtype), random_normal(rng, (140, 140), dtype)
    packed, taus = jax_linalg.geqrf(a)
    exact = {"rtol": 0.0, "atol": 0.0}
    assert_same(run(mlinalg.geqrf, backend, a), (packed, taus), **exact)
    assert_same(run(mlinalg.householder_product, backend, packed, taus),
                jax.lax.linalg.householder_product(packed, taus), **exact)
    assert_same(run(mlinalg.hessenberg, backend, s), jax.lax.linalg.hessenberg(s), **exact)
    assert_same(run(mlinalg.tridiagonal, backend, s), jax.lax.linalg.tridiagonal(s), **exact)


@pytest.mark.parametrize("backend", BACKENDS)
def test_empty(backend: str) -> None:
    for shape in [(0, 3), (3, 0), (2, 0, 0)]:
        a = np.zeros(shape, np.float32)
        assert_same(run(mlinalg.geqrf, backend, a), jax_linalg.geqrf(a))
    packed, taus = np.zeros((2, 5, 0), np.float32), np.zeros((2, 0), np.float32)
    assert_same(run(mlinalg.householder_product, backend, packed, taus),
                jax.lax.linalg.householder_product(packed, taus))
    c = np.arange(10, dtype=np.float32).reshape(2, 5, 1)
    full = (np.ones((2, 5, 3), np.float32), np.ones((2, 3), np.float32), c[..., :0])  # c without columns
    for operands in ((packed, taus, c), full):
        assert_same(run(mlinalg.ormqr, backend, *operands), jax.lax.linalg.ormqr(*operands))


@pytest.mark.parametrize("backend", ["eager", "cpu", "xla"])
def test_vmap(rng: np.random.Generator, backend: str) -> None:
    a = random_normal(rng, (4, 3, 4), np.float32)
    got = run(mlax.vmap(mlinalg.hessenberg, in_axes=1), backend, a)
    close(got, jax.vmap(jax.lax.linalg.hessenberg, in_axes=1)(a), "float32")
    square = random_normal(rng, (3, 4, 4), np.float32)
    got = run(mlax.vmap(lambda x: mlinalg.tridiagonal(x, lower=False), out_axes=1), backend, square)
    close(got, jax.vmap(lambda x: jax.lax.linalg.tridiagonal(x, lower=False), out_axes=1)(square), "float32")
    tall = random_normal(rng, (3, 5, 2), np.float32)
    packed, taus = jax_linalg.geqrf(tall)
    close(run(mlax.vmap(mlinalg.geqrf), backend, tall), jax.vmap(jax_linalg.geqrf)(tall), "float32")
    jpvt = np.array([0, 1], np.int32)
    got = run(mlax.vmap(mlinalg.geqp3, in_axes=(0, None)), backend, tall, jpvt)
    close(got, jax.vmap(jax_linalg.geqp3, in_axes=(0, None))(tall, jpvt), "float32")
    # the reflectors batched, the taus not (broadcast along the new dimension)
    got = run(mlax.vmap(mlinalg.householder_product, in_axes=(0, None)), backend, packed, taus[0])
    close(got, jax.vmap(jax.lax.linalg.householder_product, in_axes=(0, None))(packed, taus[0]), "float32")
    c = random_normal(rng, (4, 5), np.float32)  # one c for every reflector set, its batch at 1 in the result
    ormqr = {lin: lambda a, t, c, lin=lin: lin.ormqr(a, t, c, left=False)
             for lin in (mlinalg, jax.lax.linalg)}
    got = run(mlax.vmap(ormqr[mlinalg], in_axes=(0, 0, None), out_axes=1), backend, packed, taus, c)
    close(got, jax.vmap(ormqr[jax.lax.linalg], in_axes=(0, 0, None), out_axes=1)(packed, taus, c), "float32")


@pytest.mark.parametrize("name", ["geqrf", "geqp3", "householder_product", "ormqr", "hessenberg",
                                  "tridiagonal"])
def test_derivatives_are_refused_as_in_jax(rng: np.random.Generator, name: str) -> None:
    a = random_normal(rng, (3, 3), np.float32)
    taus = np.array([0.5, 0.25], np.float32)
    calls = {"geqrf": lambda lin, x: lin.geqrf(x)[0], "hessenberg": lambda lin, x: lin.hessenberg(x)[0],
             "geqp3": lambda lin, x: lin.geqp3(x, np.zeros(3, np.int32))[2],
             "householder_product": lambda lin, x: lin.householder_product(x, taus),
             "ormqr": lambda lin, x: lin.ormqr(a, taus, x, transpose=True),
             "tridiagonal": lambda lin, x: lin.tridiagonal(x)[1]}
    call = calls[name]
    with pytest.raises(NotImplementedError, match=f"Differentiation rule for '{name}' not implemented"):
        jax.grad(lambda x: jnp.sum(call(jax_linalg if name.startswith("geq") else jax.lax.linalg, x)))(a)
    with pytest.raises(Exception, match=f"Differentiation rule for '{name}' not implemented"):
        mlax.grad(lambda x: mnp.sum(call(mlinalg, x)))(a)
    # no tangent reaches the op: it goes through (the derivative is zero)
    got = mlax.grad(lambda x: mnp.sum(x) + mnp.sum(call(mlinalg, mlax.lax.stop_gradient(x))))(a)
    assert_same(got, np.ones_like(a))


def test_errors() -> None:
    with pytest.raises(ValueError, match="at least as many rows as columns"):
        mlinalg.householder_product(np.ones((2, 3), np.float32), np.ones(2, np.float32))
    with pytest.raises(ValueError, match="must not have more rows"):
        mlinalg.householder_product(np.ones((4, 3), np.float32), np.ones(4, np.float32))
    with pytest.raises(TypeError, match="same dtype"):
        mlinalg.householder_product(np.ones((4, 3), np.float32), np.ones(3, np.complex64))
    with pytest.raises(ValueError, match="square"):
        mlinalg.hessenberg(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="square"):
        mlinalg.tridiagonal(np.ones((0, 0), np.float32))
    with pytest.raises(TypeError, match="element type"):
        mlinalg.geqrf(np.ones((2, 2), np.int32))
    with pytest.raises(TypeError, match="jpvt must have element type int32"):
        mlinalg.geqp3(np.ones((2, 2), np.float32), np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="jpvt must have shape"):
        mlinalg.geqp3(np.ones((3, 2), np.float32), np.zeros(3, np.int32))
    a, taus = np.ones((4, 3), np.float32), np.ones(3, np.float32)
    with pytest.raises(ValueError, match=r"left=True expects c to have the same number of rows .* \(5, 2\)"):
        mlinalg.ormqr(a, taus, np.ones((5, 2), np.float32))
    with pytest.raises(ValueError, match="left=False expects c to have the same number of columns"):
        mlinalg.ormqr(a, taus, np.ones((2, 5), np.float32), left=False)
    with pytest.raises(ValueError, match="at most min"):
        mlinalg.ormqr(a, np.ones(4, np.float32), np.ones((4, 2), np.float32))
    with pytest.raises(ValueError, match="same batch dimensions"):
        mlinalg.ormqr(a, taus, np.ones((2, 4, 2), np.float32))
    with pytest.raises(TypeError, match="same dtype"):
        mlinalg.ormqr(a, taus, np.ones((4, 2), np.complex64))
    with pytest.raises(TypeError, match="element type"):
        mlinalg.ormqr(a.astype(np.int32), taus.astype(np.int32), np.ones((4, 2), np.int32))


# --- built on them -------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_qr_raw(rng: np.random.Generator, dtype: str, backend: str) -> None:
    a = random_normal(rng, (2, 5, 3), dtype)
    got = run(lambda x: mnp.linalg.qr(x, mode="raw"), backend, a)
    expected = jnp.linalg.qr(a, mode="raw")
    assert type(got).__name__ == "QRResult"
    close(tuple(got), tuple(expected), dtype)
    ints = rng.integers(-3, 4, (4, 3))
    close(tuple(mnp.linalg.qr(ints, mode="raw")), tuple(jnp.linalg.qr(ints, mode="raw")), "float32")


@pytest.mark.parametrize("backend", BACKENDS)
def test_scipy_hessenberg(rng: np.random.Generator, dtype: str, backend: str) -> None:
    for shape in [(5, 5), (2, 4, 4), (1, 1)]:
        a = random_normal(rng, shape, dtype)
        close(run(msl.hessenberg, backend, a), jsl.hessenberg(a), dtype)
        h, q = run(lambda x: msl.hessenberg(x, calc_q=True), backend, a)
        close((h, q), jsl.hessenberg(a, calc_q=True), dtype)
    empty = np.zeros((0, 0), np.float32)
    assert_same(msl.hessenberg(empty, calc_q=True), jsl.hessenberg(empty, calc_q=True))


@pytest.mark.parametrize("backend", BACKENDS)
def test_qr_multiply(rng: np.random.Generator, dtype: str, backend: str) -> None:
    """Every mode, conjugate and pivoting (one program), c a matrix whose batch broadcasts with a's
    or a vector: geqrf/geqp3 then ormqr, as jax, so jax's bits."""
    for a_shape in [(2, 5, 3), (3, 4)]:
        m, n = a_shape[-2:]
        a = random_normal(rng, a_shape, dtype)
        k = min(m, n)
        operands = {"left": (random_normal(rng, (k, 2), dtype), random_normal(rng, (k,), dtype)),
                    "right": (random_normal(rng, (3, 1, 4, m), dtype), random_normal(rng, (m,), dtype))}

        def products(qr_multiply: Any) -> Any:
            return lambda x, cs: [qr_multiply(x, c, mode=mode, conjugate=conjugate, pivoting=pivoting)
                                  for mode, pair in cs.items() for c in pair
                                  for conjugate in (False, True) for pivoting in (False, True)]

        got = run(products(msl.qr_multiply), backend, a, operands)
        assert_same(got, products(jsl.qr_multiply)(a, operands), rtol=0.0)


def test_qr_multiply_errors(rng: np.random.Generator) -> None:
    a = random_normal(rng, (4, 3), np.float32)
    with pytest.raises(ValueError, match="mode must be"):
        msl.qr_multiply(a, np.ones((3, 2), np.float32), mode="top")
    with pytest.raises(ValueError, match="Q has 3 columns"):
        msl.qr_multiply(a, np.ones((4, 2), np.float32), mode="left")
    with pytest.raises(ValueError, match="Q has 4 rows"):
        msl.qr_multiply(a, np.ones((2, 3), np.float32))
    with pytest.raises(Exception, match="Differentiation rule for 'geqrf' not implemented"):
        mlax.grad(lambda a: mnp.sum(msl.qr_multiply(a, np.ones((2, 4), np.float32))[0]))(a)


@pytest.mark.parametrize("backend", BACKENDS)
def test_eigh_tridiagonal(rng: np.random.Generator, dtype: str, backend: str) -> None:
    real = np.dtype(dtype).kind == "f"
    for n in (7, 2, 1):
        d = random_normal(rng, (n,), dtype)
        if not real:  # a Hermitian matrix's diagonal is real
            d = d.real.astype(dtype)
        e = random_normal(rng, (n - 1,), dtype)
        for kwargs in ({}, {"select": "i", "select_range": (0, n - 1)}, {"tol": 1e-3}):
            def values(d: Any, e: Any, kw: dict = kwargs) -> Any:
                return msl.eigh_tridiagonal(d, e, eigvals_only=True, **kw)

            got = run(values, backend, d, e)
            close(got, jsl.eigh_tridiagonal(d, e, eigvals_only=True, **kwargs), dtype)
    d, e = random_normal(rng, (6,), "float32"), random_normal(rng, (5,), "float32")
    kwargs = {"select": "i", "select_range": (2, 4)}
    close(run(lambda d, e: msl.eigh_tridiagonal(d, e, eigvals_only=True, **kwargs), backend, d, e),
          jsl.eigh_tridiagonal(d, e, eigvals_only=True, **kwargs), "float32")


def test_eigh_tridiagonal_errors() -> None:
    d, e = np.ones(4, np.float32), np.ones(3, np.float32)
    with pytest.raises(TypeError, match="same dtype"):
        msl.eigh_tridiagonal(d, e.astype(np.complex64), eigvals_only=True)
    with pytest.raises(TypeError, match="Only float32 and float64"):
        msl.eigh_tridiagonal(d.astype(np.int32), e.astype(np.int32), eigvals_only=True)
    with pytest.raises(NotImplementedError, match="select='v'"):
        msl.eigh_tridiagonal(d, e, eigvals_only=True, select="v")
    with pytest.raises(ValueError, match="select_range must be specified"):
        msl.eigh_tridiagonal(d, e, eigvals_only=True, select="i")
