"""qr with column pivoting (jax's `lax.linalg.qr(pivoting=True)`: LAPACK's ?geqp3 from free pivots,
then ?orgqr / ?ungqr) against jax: q, r and the int32 permutation p with x[..., p] = q @ r, eagerly
(the interpreter), on the native CPU backend and on XLA, in f32, f64, complex64 and complex128,
square, tall, wide, batched and empty, full and reduced; scipy.linalg.qr's pivoting modes; JVPs and
gradients against jax and against finite differences (float64, complex128); vmap against jax.vmap.

The inputs' column norms are well apart (a geometric spread in a random order per matrix), so the
permutation is the same at x and at x +- eps dx and the derivatives exist. jax 0.10.2 cannot take
the JVP of a batched pivoted qr (its `dx[..., p]` indexes with the whole batch of permutations), so
the batched references are jax.vmap of jax's rule; and its rule takes the unpermuted X2 in a wide
matrix's dR2 (its dR disagrees with finite differences), so for wide matrices the reference is jax's
plain qr of the permuted columns, which is what the pivoted factorization is near x.
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
from tests.linalg.test_primitives import BACKENDS, TOL
from tests.oracle import assert_same, random_normal, run

jlinalg = jax.lax.linalg
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


@pytest.fixture(params=DTYPES, ids=["f32", "f64", "c64", "c128"])
def any_dtype(request: pytest.FixtureRequest) -> np.dtype:
    dtype = np.dtype(request.param)
    if dtype in (np.float64, np.complex128):
        request.getfixturevalue("x64")
    return dtype


def separated(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Random matrices whose column norms are spread from 1 to 100, in a random order per matrix."""
    n = shape[-1]
    scales = rng.permuted(np.broadcast_to(np.geomspace(1.0, 100.0, n), shape[:-2] + (n,)), axis=-1)
    return (random_normal(rng, shape, dtype) * scales[..., None, :]).astype(dtype)


def pivoted(lin: Any, full: bool) -> Callable[[Any], Any]:
    return functools.partial(lin.qr, pivoting=True, full_matrices=full)


def each_shape(lin: Any) -> Callable[..., list[Any]]:
    """Every input's pivoted qr, full and reduced: one program for all the shapes."""
    return lambda *xs: [pivoted(lin, full)(x) for x in xs for full in (True, False)]


SHAPES = [(4, 4), (2, 5, 3), (3, 5), (2, 1, 4, 7), (9, 6), (2, 0, 3), (0, 3, 2), (3, 0)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_values_and_dtypes(rng: np.random.Generator, any_dtype: np.dtype, backend: str) -> None:
    xs = [separated(rng, shape, any_dtype) for shape in SHAPES]
    got = run(each_shape(mlinalg), backend, *xs)
    expected = each_shape(jlinalg)(*xs)
    assert_same(got, expected, rtol=TOL[any_dtype], atol=TOL[any_dtype] * 10)
    for (q, r, p), x in zip(got[::2], xs, strict=True):  # the permuted columns are Q R
        assert p.dtype == np.int32
        permuted = np.take_along_axis(x, np.broadcast_to(np.asarray(p)[..., None, :], x.shape), axis=-1)
        np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), permuted, rtol=1e-3, atol=1e-3 * 100)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rank_deficient_matrices_reveal_their_rank(rng: np.random.Generator, backend: str) -> None:
    """Repeated and zero columns: R's diagonal non-increasing in magnitude, ~0 past the rank."""
    base = rng.standard_normal((6, 3)).astype(np.float32)
    dependent = [base[:, :1] * 2, np.zeros((6, 1), np.float32), base[:, 1:2] - base[:, 2:]]
    x = np.concatenate([base, *dependent], axis=1)
    got = run(pivoted(mlinalg, True), backend, x)
    assert_same(got, pivoted(jlinalg, True)(x), rtol=1e-5, atol=1e-5)
    diagonal = np.abs(np.diagonal(np.asarray(got[1])))
    assert np.all(np.diff(diagonal) <= 1e-6) and np.all(diagonal[3:] < 1e-5)


def scipy_modes(sl: Any) -> Callable[..., list[Any]]:
    return lambda a, w: [sl.qr(a, pivoting=True), sl.qr(w, mode="economic", pivoting=True),
                         sl.qr(a, mode="r", pivoting=True), sl.qr(w, mode="r")]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.complex64], ids=["f32", "c64"])
def test_scipy_qr(rng: np.random.Generator, backend: str, dtype: Any) -> None:
    """(q, r, p), (r, p) for mode 'r'; (r,) without pivoting; integers promoted to float, as jax."""
    a, w = separated(rng, (2, 5, 3), dtype), separated(rng, (3, 6), dtype)
    assert_same(run(scipy_modes(msl), backend, a, w), scipy_modes(jsl)(a, w), rtol=1e-5, atol=1e-4)
    ints = rng.integers(-9, 9, (4, 3)).astype(np.int32)
    assert_same(run(lambda a: msl.qr(a, pivoting=True), backend, ints), jsl.qr(ints, pivoting=True),
                rtol=1e-5, atol=1e-5)


# --- derivatives ----------------------------------------------------------------------------------

# (shape, full_matrices): square, tall full and reduced, wide, and batched.
JVP_CASES = [((4, 4), True), ((5, 3), True), ((5, 3), False), ((3, 5), True), ((2, 5, 3), True),
             ((2, 3, 5), False)]


@functools.partial(jax.jit, static_argnames="full")
def jax_tangents(x: np.ndarray, dx: np.ndarray, full: bool) -> tuple[Any, Any]:
    """jax's (q, r, p) and (dq, dr) of the pivoted qr, matrix by matrix; for a wide matrix the
    tangents of jax's plain qr of its permuted columns (see the module docstring)."""
    m, n = x.shape[-2:]

    def one(a: Any, da: Any) -> tuple[Any, Any]:
        if m >= n:
            (q, r, p), (dq, dr, _) = jax.jvp(pivoted(jlinalg, full), (a,), (da,))
            return (q, r, p), (dq, dr)
        p = pivoted(jlinalg, full)(a)[2]
        (q, r), (dq, dr) = jax.jvp(lambda b: jlinalg.qr(b[:, p], full_matrices=full), (a,), (da,))
        return (q, r, p), (dq, dr)

    for _ in x.shape[:-2]:
        one = jax.vmap(one)
    return one(x, dx)


def mlax_jvps(xs: list[np.ndarray], dxs: list[np.ndarray]) -> Any:
    fn = lambda xs: [pivoted(mlinalg, full)(x) for x, (_, full) in zip(xs, JVP_CASES, strict=True)]  # noqa: E731
    return mlax.jvp(fn, (xs,), (dxs,))


# One dtype per backend: the rules are the same program on both (test_values covers each backend's
# lowering of every dtype), and compiling them takes most of these tests' time.
BACKEND_DTYPES = pytest.mark.parametrize("backend, dtype", [("cpu", np.float32), ("xla", np.complex128)],
                                         ids=["cpu-f32", "xla-c128"])


@BACKEND_DTYPES
def test_jvp_against_jax(rng: np.random.Generator, backend: str, dtype: Any,
                         request: pytest.FixtureRequest) -> None:
    if dtype == np.complex128:
        request.getfixturevalue("x64")
    xs = [separated(rng, shape, dtype) for shape, _ in JVP_CASES]
    dxs = [random_normal(rng, shape, dtype) for shape, _ in JVP_CASES]
    primals, tangents = run(mlax_jvps, backend, xs, dxs)
    primal_tol, tol = TOL[np.dtype(dtype)], 2e-3 if dtype == np.float32 else 1e-9
    for (shape, full), x, dx, out, tangent in zip(JVP_CASES, xs, dxs, primals, tangents, strict=True):
        expected_primals, expected_tangents = jax_tangents(x, dx, full=full)
        assert_same(tuple(out), tuple(expected_primals), rtol=primal_tol, atol=primal_tol * 10)
        assert_same(tuple(tangent[:2]), tuple(expected_tangents), rtol=tol, atol=tol)
        np.testing.assert_array_equal(tangent[2], np.zeros(shape[:-2] + shape[-1:], np.int32))  # no tangent


def test_jvp_against_finite_differences(rng: np.random.Generator, x64: None) -> None:
    """Every case in float64 and complex128 on the CPU backend, wide matrices included (where jax's
    dR is off)."""
    for dtype in (np.float64, np.complex128):
        xs = [separated(rng, shape, dtype) for shape, _ in JVP_CASES]
        dxs = [random_normal(rng, shape, dtype) for shape, _ in JVP_CASES]
        _, tangents = mlax.jit(mlax_jvps, backend="cpu")(xs, dxs)
        eps = 1e-6
        for (_, full), x, dx, tangent in zip(JVP_CASES, xs, dxs, tangents, strict=True):
            plus, minus = (pivoted(jlinalg, full)(x + sign * eps * dx) for sign in (1, -1))
            np.testing.assert_array_equal(plus[2], minus[2])  # the same permutation on both sides
            for got, hi, lo in zip(tangent[:2], plus[:2], minus[:2], strict=True):
                np.testing.assert_allclose(got, (hi - lo) / (2 * eps), rtol=1e-6, atol=1e-6)


def loss(factor: Callable[[Any], Any], np_: Any, w_q: Any, w_r: Any) -> Callable[[Any], Any]:
    """A real function of the Q and R ``factor`` gives (its values depend on LAPACK's phases, which
    the rule follows)."""
    def f(x: Any) -> Any:
        q, r, *_ = factor(x)
        return np_.sum(np_.real(q * w_q)) + np_.sum(np_.abs(r) ** 2 * w_r)
    return f


@functools.partial(jax.jit, static_argnames="full")
def jax_grad(full: bool, x: np.ndarray, w_q: np.ndarray, w_r: np.ndarray) -> Any:
    """jax's gradient of `loss`, matrix by matrix; for a wide matrix that of jax's plain qr of its
    permuted columns (see the module docstring)."""
    wide = x.shape[-2] < x.shape[-1]

    def one(a: Any, w_q: Any, w_r: Any) -> Any:
        if not wide:
            return jax.grad(loss(pivoted(jlinalg, full), jnp, w_q, w_r))(a)
        p = pivoted(jlinalg, full)(a)[2]
        return jax.grad(loss(lambda b: jlinalg.qr(b[:, p], full_matrices=full), jnp, w_q, w_r))(a)

    for _ in x.shape[:-2]:
        one = jax.vmap(one)
    return one(x, w_q, w_r)


@pytest.mark.parametrize("backend, dtype", [("cpu", np.float64), ("xla", np.complex128)],
                         ids=["cpu-f64", "xla-c128"])
@pytest.mark.parametrize("case", range(len(JVP_CASES)), ids=lambda i: "x".join(map(str, JVP_CASES[i][0]))
                         + ("_full" if JVP_CASES[i][1] else "_reduced"))
def test_grad_against_jax_and_finite_differences(rng: np.random.Generator, x64: None, backend: str,
                                                 dtype: Any, case: int) -> None:
    shape, full = JVP_CASES[case]
    x = separated(rng, shape, dtype)
    q_shape, r_shape = (s.shape for s in pivoted(jlinalg, full)(x)[:2])
    w_q, w_r = random_normal(rng, q_shape, dtype), rng.standard_normal(r_shape)
    grad = np.asarray(mlax.jit(mlax.grad(loss(pivoted(mlinalg, full), mnp, w_q, w_r)), backend=backend)(x))
    assert_same(grad, jax_grad(x=x, w_q=w_q, w_r=w_r, full=full), rtol=1e-9, atol=1e-9)
    # jax's convention: grad(f)(z) = df/dx - i df/dy, so the derivative along d is Re(grad * d)
    direction, eps = random_normal(rng, shape, dtype), 1e-6
    f = loss(pivoted(jlinalg, full), jnp, w_q, w_r)
    numeric = (f(x + eps * direction) - f(x - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(np.sum(np.real(grad * direction)), numeric, rtol=1e-6)


# --- batching -------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap(rng: np.random.Generator, backend: str) -> None:
    x, z = separated(rng, (2, 4, 5, 3), np.float32), separated(rng, (4, 3, 6), np.complex64)

    def both(lin: Any) -> Callable[[Any, Any], Any]:
        return lambda x, z: (*pivoted(lin, True)(x), *pivoted(lin, False)(z))

    got = run(mlax.vmap(both(mlinalg), in_axes=(1, 0)), backend, x, z)
    assert_same(got, jax.vmap(both(jlinalg), in_axes=(1, 0))(x, z), rtol=1e-5, atol=1e-4)


def test_vmap_of_grad(rng: np.random.Generator, x64: None) -> None:
    """Per-example gradients: the batching rule of every op of the pivoted rule's transpose."""
    x = separated(rng, (3, 5, 4), np.float64)
    w_q, w_r = rng.standard_normal((5, 4)), rng.standard_normal((4, 4))
    got = mlax.jit(mlax.vmap(mlax.grad(loss(pivoted(mlinalg, False), mnp, w_q, w_r))))(x)
    expected = jax.vmap(jax.grad(loss(pivoted(jlinalg, False), jnp, w_q, w_r)))(x)
    assert_same(got, expected, rtol=1e-9, atol=1e-9)


def test_errors_are_jaxs_kind() -> None:
    with pytest.raises(TypeError, match="rank at least 2"):
        mlinalg.qr(np.ones(3, np.float32), pivoting=True)
    with pytest.raises(TypeError, match="f32, f64, complex64 or complex128, got int32"):
        mlinalg.qr(np.ones((3, 3), np.int32), pivoting=True)
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode"):
        msl.qr(np.ones((3, 3), np.float32), mode="raw", pivoting=True)
