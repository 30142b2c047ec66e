"""lax.linalg.tridiagonal_solve(perturb_singular=True) (jaxlib's perturbed kernel as front-end scans)
and scipy.linalg.eigh_tridiagonal's eigenvectors (jax's inverse iteration on it) against jax.

The solve runs the kernel's operations in its order, so eagerly (the interpreter) and on the native
CPU backend it gives jax's bits, singular systems included. XLA compiles the same scans with its own
rounding (contracted products): there a nonsingular system agrees to rounding, and a singular one,
whose tiny pivot is rounding noise, gives a solution of jax's direction (the null vector) with
another huge scale. Eigenvectors are compared as what is defined: the eigenvalues to the bit, each
isolated eigenvalue's vector up to its phase (|<v, v_jax>| = 1), a cluster's invariant subspace
(its projector), and the residual and orthonormality of every vector. mlax's random.normal and
vector norm differ from XLA's in the last bit, so inverse iteration starts from jax's vectors only
to rounding."""

from __future__ import annotations

from typing import Any

import jax
import jax.scipy.linalg as jsl
import numpy as np
import pytest

import mlax
import mlax.random as mrandom
import mlax.scipy.linalg as msl
from mlax.lax import linalg as mlinalg
from tests.oracle import assert_same, random_normal, run

BACKENDS = ["eager", "cpu", "xla"]
# Every dtype on every backend is the long form (-m slow); by default each dtype runs on one
# backend and each backend sees a real and a complex type.
_QUICK = {("float32", "cpu"), ("complex64", "xla"), ("float64", "eager"), ("complex128", "cpu"),
          ("float64", "xla")}
DTYPES_ON_BACKENDS = [pytest.param(t, b, id=f"{t}-{b}", marks=() if (t, b) in _QUICK else pytest.mark.slow)
                      for t in ("float32", "complex64", "float64", "complex128") for b in BACKENDS]
EPS = {np.dtype(t): np.finfo(t).eps for t in (np.float32, np.float64, np.complex64, np.complex128)}


@pytest.fixture(params=["float32", "complex64", "float64", "complex128"])
def dtype(request: pytest.FixtureRequest) -> np.dtype:
    if request.param in ("float64", "complex128"):
        request.getfixturevalue("x64")
    return np.dtype(request.param)


def perturbed(dl: Any, d: Any, du: Any, b: Any) -> Any:
    return mlinalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True)


def jax_perturbed(dl: Any, d: Any, du: Any, b: Any) -> Any:
    return jax.lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True)


def systems(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, singular: bool) -> list[Any]:
    """dl, d, du (shape) and b (shape + (2,)); ``singular``: a Hermitian T shifted by its smallest
    eigenvalue, as inverse iteration solves."""
    dl, d, du = (random_normal(rng, shape, dtype) for _ in range(3))
    if singular:
        du = np.concatenate([dl[..., 1:], np.zeros_like(dl[..., :1])], axis=-1).conj()
        d = d.real.astype(dtype)
        t = np.zeros(shape + shape[-1:], np.complex128)
        i = np.arange(shape[-1])
        t[..., i, i], t[..., i[1:], i[:-1]], t[..., i[:-1], i[1:]] = d, dl[..., 1:], du[..., :-1]
        d = (d - np.linalg.eigvalsh(t)[..., :1]).astype(dtype)
    return [dl, d, du, random_normal(rng, shape + (2,), dtype)]


def same_directions(got: Any, expected: Any, tol: float) -> None:
    """Each solution column a multiple of jax's: the normalized columns' overlap is 1."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and np.isfinite(got).all()
    g, e = (x / np.linalg.norm(x, axis=-2, keepdims=True) for x in (got, expected))
    np.testing.assert_allclose(np.abs(np.sum(g.conj() * e, axis=-2)), 1, atol=tol)


# --- tridiagonal_solve(perturb_singular=True) ------------------------------------------------------------


@pytest.mark.parametrize("dtype, backend", DTYPES_ON_BACKENDS, indirect=["dtype"])
def test_perturbed_solve(rng: np.random.Generator, dtype: np.dtype, backend: str) -> None:
    """Sizes 1 to 7 (1 and 2 take the kernel's own branches), batched, singular or not: jax's bits
    eagerly and on CPU, but for singular complex systems: a complex modulus may differ from the
    kernel's (glibc's hypot) in the last bit, and a singular Hermitian 2 x 2 ties the row
    comparison, so which row pivots is rounding's choice there (the direction is the same)."""
    eps = EPS[dtype]
    for m, batch in ((1, (3,)), (2, ()), (3, (2, 2)), (7, (3,))):
        for singular in (False, True):
            args = systems(rng, batch + (m,), dtype, singular)
            got, expected = run(perturbed, backend, *args), jax_perturbed(*args)
            if backend != "xla" and not (singular and dtype.kind == "c"):
                assert_same(got, expected, rtol=0.0)
            elif singular and m > 1:
                same_directions(got, expected, 1e3 * eps)
            else:
                assert_same(got, expected, rtol=1e3 * eps, atol=0.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_perturbed_solve_pivots(backend: str, x64: None) -> None:
    """The kernel's pivot rules one by one: a zero pivot (a zero matrix, a zero column) is pushed to
    eps max|U| or the safe minimum; a tiny one whose row would overflow is pushed, doubling, until it
    does not (a long loop here); a zero subdiagonal entry leaves its rows unswapped; a negative pivot
    is pushed away from zero downwards. The solutions stay finite."""
    cases = [(np.zeros(3), np.zeros(3), np.zeros(3), np.ones((3, 2))),
             (np.array([0.0]), np.array([1e-20]), np.array([0.0]), np.array([[1e300, -3.0]])),
             (np.array([0.0, 0.0, 1.0]), np.array([0.0, 2.0, 0.0]), np.array([1.0, 0.0, 0.0]),
              np.ones((3, 1))),
             (np.array([0.0, 1e-30, 2.0]), np.array([-1e-30, -1e-40, 3.0]), np.array([1e-30, 1.0, 0.0]),
              np.array([[1e290], [1.0], [-2.0]])),
             (np.array([0.0, 0.0]), np.array([0.0, 1.0]), np.array([5.0, 0.0]), np.array([[1.0], [-1.0]]))]
    for args in cases:
        got, expected = run(perturbed, backend, *args), jax_perturbed(*args)
        assert np.isfinite(np.asarray(got)).all()
        assert_same(got, expected, rtol=0.0 if backend != "xla" else 1e-14)


def test_perturbed_solve_scales_subnormal_pivots(x64: None) -> None:
    """A pivot below the safe minimum with a small row is scaled up, row with it (LAPACK lagts's
    branch). XLA's CPU runtime flushes such subnormal numbers to zero, so jax never takes it: checked
    against the exact quotient, eagerly and on the native CPU backend alike."""
    args = (np.zeros(1), np.array([1e-310]), np.zeros(1), np.array([[1e-300, -2e-301]]))
    got = np.asarray(perturbed(*args))
    np.testing.assert_allclose(got, args[3] / 1e-310, rtol=1e-4)  # 1e-310 is subnormal: 4 digits
    assert_same(run(perturbed, "cpu", *args), got, rtol=0.0)


@pytest.mark.parametrize("backend", ["cpu", "xla"])
def test_perturbed_solve_derivatives(rng: np.random.Generator, backend: str) -> None:
    """jax's rules with perturb_singular: jvp, grad in every operand (the transpose of the
    perturbed solve; jax solves with the transposed diagonals: equal to rounding while no pivot is
    perturbed), vmap over b alone and vmap of grad; jvp also through a singular system, where the
    tangent is as huge as the solution."""
    dl, d, du, b = systems(rng, (3, 5), np.dtype(np.float32), singular=False)
    w = rng.standard_normal(b.shape).astype(np.float32)
    tangents = tuple(rng.standard_normal(x.shape).astype(np.float32) for x in (dl, d, du, b))
    singular = systems(rng, (2, 4), np.dtype(np.float32), singular=True)
    singular_tangents = tuple(rng.standard_normal(x.shape).astype(np.float32) for x in singular)

    def derivatives(solve: Any, jvp: Any, grad: Any, vmap: Any) -> Any:
        loss = lambda *args: (solve(*args) * w).sum() ** 2  # noqa: E731
        return lambda dl, d, du, b, t, s, st: (grad(loss, argnums=(0, 1, 2, 3))(dl, d, du, b),
                                               jvp(solve, (dl, d, du, b), t),
                                               vmap(solve, in_axes=(None, None, None, 0))(dl, d, du, b[None]),
                                               vmap(grad(loss, argnums=1))(dl, d, du, b),
                                               jvp(solve, s, st))

    got = mlax.jit(derivatives(perturbed, mlax.jvp, mlax.grad, mlax.vmap), backend=backend)(
        dl, d, du, b, tangents, tuple(singular), singular_tangents)
    expected = derivatives(jax_perturbed, jax.jvp, jax.grad, jax.vmap)(
        dl, d, du, b, tangents, tuple(singular), singular_tangents)
    assert_same(got[:4], expected[:4], rtol=1e-3, atol=1e-3)
    for g, e in zip(got[4], expected[4], strict=True):
        if backend == "cpu":
            assert_same(g, e, rtol=1e-5)
        else:
            same_directions(g, e, 1e-3)


def test_perturbed_solve_grad_against_finite_differences(rng: np.random.Generator, x64: None) -> None:
    args = systems(rng, (6,), np.dtype(np.float64), singular=False)
    w = rng.standard_normal(args[3].shape)
    loss = lambda *args: (perturbed(*args) * w).sum() ** 2  # noqa: E731
    value_and_grad = mlax.jit(mlax.value_and_grad(loss, argnums=(0, 1, 2, 3)))
    grads = value_and_grad(*args)[1]
    for i, grad in enumerate(grads):
        direction, step = rng.standard_normal(args[i].shape), 1e-6
        plus, minus = list(args), list(args)
        plus[i], minus[i] = args[i] + step * direction, args[i] - step * direction
        numeric = (float(value_and_grad(*plus)[0]) - float(value_and_grad(*minus)[0])) / (2 * step)
        np.testing.assert_allclose(np.sum(np.asarray(grad) * direction), numeric, rtol=1e-6)


def test_perturbed_solve_empty() -> None:
    for shape in [(2, 0), (3,)]:
        dl = np.ones(shape, np.float32)
        b = np.ones(shape + (0,), np.float32)
        assert_same(perturbed(dl, dl, dl, b), jax_perturbed(dl, dl, dl, b))


# --- eigh_tridiagonal's eigenvectors --------------------------------------------------------------------


def check_eigenvectors(d: Any, e: Any, got: Any, expected: Any, eps: float) -> None:
    """Eigenvalues to the bit; eigenvectors orthonormal with small residuals, each isolated
    eigenvalue's as jax's up to phase and each cluster spanning jax's subspace (equal projectors,
    to eps over the gap to the other eigenvalues)."""
    (w, v), (w_jax, v_jax) = (tuple(np.asarray(x) for x in pair) for pair in (got, expected))
    assert_same(w, w_jax, rtol=0.0)
    assert v.dtype == v_jax.dtype and v.shape == v_jax.shape
    n, k = v.shape
    t = np.diag(d).astype(v.dtype) + np.diag(e.conj(), -1) + np.diag(e, 1)
    scale = max(np.abs(w_jax).max(), 1.0)
    tol = 100 * n * eps
    np.testing.assert_allclose(np.abs(t @ v - v * w), 0, atol=tol * scale)
    np.testing.assert_allclose(v.conj().T @ v, np.eye(k), atol=tol)
    all_w = np.linalg.eigvalsh(t.astype(np.complex128))
    clusters = np.split(np.arange(k), np.flatnonzero(np.diff(w) >= np.sqrt(eps) * scale) + 1)  # jax's
    for cluster in clusters:
        inside = np.abs(all_w[:, None] - w[cluster]).min(axis=1) < np.sqrt(eps) * scale
        gap = np.abs(all_w[~inside][:, None] - w[cluster]).min(initial=scale)
        p, p_jax = (x[:, cluster] @ x[:, cluster].conj().T for x in (v, v_jax))
        np.testing.assert_allclose(p, p_jax, atol=tol * scale / gap)


@pytest.mark.parametrize("dtype, backend", DTYPES_ON_BACKENDS, indirect=["dtype"])
def test_eigh_tridiagonal_eigenvectors(rng: np.random.Generator, dtype: np.dtype, backend: str) -> None:
    """A random matrix (all eigenvectors, jax's default key), and one with a triple eigenvalue and
    a close pair (clusters, orthonormalized by QR) with a key of its own and select='i'; size 1 is
    the identity."""
    n = 6
    d = random_normal(rng, (n,), dtype).real.astype(dtype)
    e = random_normal(rng, (n - 1,), dtype)
    cluster_d = np.array([2.0, 2.0, 2.0, 1.0, 1.0, 5.0], dtype)
    cluster_e = np.array([0.0, 0.0, 0.0, 1e-9, 0.0], dtype)
    kwargs = {"select": "i", "select_range": (0, 4)}  # the pair and the triple, not 5

    def both(sl: Any, key: Any) -> Any:
        return lambda d, e, cd, ce: (sl.eigh_tridiagonal(d, e, eigvals_only=False),
                                     sl.eigh_tridiagonal(cd, ce, eigvals_only=False, key=key, **kwargs))

    got = run(both(msl, mrandom.key(7)), backend, d, e, cluster_d, cluster_e)
    expected = both(jsl, jax.random.key(7))(d, e, cluster_d, cluster_e)
    check_eigenvectors(d, e, got[0], expected[0], EPS[dtype])
    check_eigenvectors(cluster_d, cluster_e, got[1], expected[1], EPS[dtype])
    one = (d[:1], e[:0])
    assert_same(run(lambda d, e: msl.eigh_tridiagonal(d, e), backend, *one), jsl.eigh_tridiagonal(*one))


@pytest.mark.parametrize("backend", ["cpu", "xla"])
def test_eigh_tridiagonal_eigenvectors_vmap(rng: np.random.Generator, backend: str) -> None:
    """vmap over matrices, one with every eigenvalue equal (a single cluster of all of them), the
    key shared."""
    d, e = rng.standard_normal((3, 5)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    d[1], e[1] = 0.5, 0.0

    def batched(sl: Any, vmap: Any) -> Any:
        return vmap(lambda d, e, key: sl.eigh_tridiagonal(d, e, eigvals_only=False, key=key),
                    in_axes=(0, 0, None))

    got = mlax.jit(batched(msl, mlax.vmap), backend=backend)(d, e, mrandom.key(3))
    expected = batched(jsl, jax.vmap)(d, e, jax.random.key(3))
    for i in range(3):
        check_eigenvectors(d[i], e[i], (got[0][i], got[1][i]), (expected[0][i], expected[1][i]), EPS[d.dtype])
