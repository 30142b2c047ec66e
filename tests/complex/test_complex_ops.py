"""The rest of jax's ops on complex64/complex128 against jax: transcendental functions, powers,
lexicographic max/min/compare/sort, reductions and cumulative ops, indexing, windows, conv,
psum, complex BLAS matmuls; eagerly, under jit on the native and XLA backends, under grad
(holomorphic and real losses) and vmap. Each test traces every op of its family in one
program, so one compile covers them all."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax import lax
from tests.complex.test_complex import BACKENDS, check, random_complex, run

pytestmark = pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning",
                                        "ignore:Casting from complex:DeprecationWarning")

DTYPES = [np.complex64, np.complex128]
# complex128 eagerly repeats complex64's interpreter path op by op: compiled backends only
CASES = [(np.complex64, backend) for backend in BACKENDS] + [(np.complex128, "cpu"), (np.complex128, "xla")]
# The composites (asin & co.) follow Kahan's formulas where XLA runs Hull et al.'s: a few ulp apart.
TOLERANCE = {np.dtype(np.complex64): 3e-5, np.dtype(np.complex128): 1e-11}


def _x64(dtype: Any, request: Any) -> None:
    if dtype == np.complex128:
        request.getfixturevalue("x64")


def _close(got: Any, want: Any, dtype: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    tol = TOLERANCE.get(np.dtype(dtype), 0) if got.dtype.kind in "fc" else 0
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _check_all(got: dict[str, Any], want: dict[str, Any], dtype: Any) -> None:
    assert got.keys() == want.keys()
    for name in want:
        try:
            _close(got[name], want[name], dtype)
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from None


def _points(rng: np.random.Generator, dtype: Any) -> np.ndarray:
    """Random values in the square |re|, |im| < 3, small ones, large ones, real ties, and points
    on the branch cuts, with zero parts of both signs."""
    z = random_complex(rng, (24,), dtype)
    small = random_complex(rng, (4,), dtype) * 1e-6
    large = random_complex(rng, (4,), dtype) * 1e3
    cuts = np.array([2.5 + 0j, -1.7 + 0j, 3j, -2.2j, 0.25 + 0j, 0.5j, complex(2.5, -0.0),
                     complex(-1.7, -0.0), complex(-0.0, 3), complex(-0.0, -2.2)], dtype)
    ties = z[:4].real + 1j * z[4:8].imag
    return np.concatenate([z, small, large, cuts, ties]).astype(dtype)


# name -> function of (numpy-like module, lax-like module) -> function of (z, w)
ELEMENTWISE: dict[str, Callable[[Any, Any], Callable[[Any, Any], Any]]] = {
    **{name: (lambda name: lambda np_, lax_: lambda z, w: getattr(lax_, name)(z))(name)
       for name in ("expm1", "log1p", "rsqrt", "sin", "cos", "tan", "tanh", "exp2", "logistic",
                    "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")},
    "arcsinh": lambda np_, lax_: lambda z, w: np_.arcsinh(z / 2),
    "square": lambda np_, lax_: lambda z, w: lax_.square(z),
    "integer_pow": lambda np_, lax_: lambda z, w: lax_.integer_pow(z, 3) + lax_.integer_pow(w, -2),
    # bounded exponents: XLA's pow gives NaN where a huge exponent underflows the result
    "pow": lambda np_, lax_: lambda z, w: lax_.pow(z, w * 2 / (1 + np_.abs(w))),
    "pow_int": lambda np_, lax_: lambda z, w: lax_.pow(z, np.int32(3)),
    "power": lambda np_, lax_: lambda z, w: np_.power(z, 2.5) + z ** 2,
    "max": lambda np_, lax_: lambda z, w: lax_.max(z, w),
    "min": lambda np_, lax_: lambda z, w: lax_.min(z, w),
    "maximum": lambda np_, lax_: lambda z, w: np_.maximum(z, w) - np_.minimum(w, z),
    "less": lambda np_, lax_: lambda z, w: np_.less(z, w),
    "ordering": lambda np_, lax_: lambda z, w: (z >= w) ^ (z < w * 2) | (w <= z),
}


@pytest.mark.parametrize(("dtype", "backend"), CASES)
def test_elementwise(dtype: Any, backend: str, rng: np.random.Generator, request: Any) -> None:
    _x64(dtype, request)
    z, w = _points(rng, dtype), _points(rng, dtype)[::-1].copy()
    w[-4:] = z[-4:].real + 1j * w[-4:].imag  # real ties between z and w: the imaginary parts decide

    def program(np_: Any, lax_: Any) -> Callable[[Any, Any], dict[str, Any]]:
        return lambda z, w: {name: f(np_, lax_)(z, w) for name, f in ELEMENTWISE.items()}

    with jax.enable_x64(dtype == np.complex128):
        want = program(jnp, jax.lax)(z, w)
    _check_all(run(program(mnp, lax), backend, z, w), want, dtype)


def test_float_classification(rng: np.random.Generator) -> None:
    z = random_complex(rng, (8,), np.complex64)
    z[1], z[2], z[3] = complex(np.inf, 1), complex(1, np.nan), complex(2, -np.inf)
    for name in ("isfinite", "isinf", "isnan"):
        for backend in BACKENDS:
            check(run(getattr(mnp, name), backend, z), getattr(jnp, name)(z))
    with pytest.raises(ValueError, match="not well defined for complex"):
        mnp.isposinf(z)


def _reductions(np_: Any, lax_: Any) -> Callable[[Any], dict[str, Any]]:
    return lambda z: {
        "prod": np_.prod(z, axis=1),
        "max": np_.max(z, axis=0),
        "min": lax_.reduce_min(z, (1,)),
        "cumsum": np_.cumsum(z, axis=1),
        "cumprod": np_.cumprod(z / 2, axis=0),
        "cummax": lax_.cummax(z, axis=1),
        "cummin": lax_.cummin(z, axis=0, reverse=True),
        "window_sum": lax_.reduce_window(z, np.zeros((), z.dtype), lax_.add, (2, 2), (1, 1), "VALID"),
        "window_max": lax_.reduce_window(z, np.array(-np.inf, z.dtype), lax_.max, (2, 3), (1, 2), "SAME"),
        "sort": np_.sort(z, axis=1),
        "argsort": np_.argsort(z.reshape(-1)),
        "sort_two": lax_.sort((z[0], z[1].real), num_keys=1),
    }


@pytest.mark.parametrize(("dtype", "backend"), CASES)
def test_reductions_and_sort(dtype: Any, backend: str, rng: np.random.Generator, request: Any) -> None:
    _x64(dtype, request)
    z = random_complex(rng, (4, 6), dtype)
    z[:, 0] = z[:, 1].real + 1j * z[:, 0].imag  # real ties along both axes
    z[0] = z[1].real + 1j * z[0].imag
    with jax.enable_x64(dtype == np.complex128):
        want = _reductions(jnp, jax.lax)(z)
    _check_all(run(_reductions(mnp, lax), backend, z), want, dtype)


def _indexing(np_: Any, lax_: Any) -> Callable[[Any, Any], dict[str, Any]]:
    idx = np.array([2, 0, 3, 2])
    return lambda z, w: {
        "gather": np_.asarray(z)[idx, 1:4],
        "take": np_.take_along_axis(z, np.array([[1, 0, 2]] * 4), axis=1),
        "scatter_add": np_.asarray(z).at[idx].add(w * 1j),
        "scatter_mul": np_.asarray(z).at[idx, 1].multiply(w[:, 0]),
        "scatter_set": np_.asarray(z).at[idx, 2].set(w[:, 3]),
        "dynamic": lax_.dynamic_update_slice(z, lax_.dynamic_slice(w, (1, 2), (2, 3)), (2, 1)),
        "conv": lax_.conv_general_dilated(z[None, None], w[None, None, :3, :3], (1, 1), "SAME"),
    }


@pytest.mark.parametrize("backend", BACKENDS)
def test_indexing_and_conv(backend: str, rng: np.random.Generator) -> None:
    z, w = random_complex(rng, (4, 6), np.complex64), random_complex(rng, (4, 6), np.complex64)
    _check_all(run(_indexing(mnp, lax), backend, z, w), _indexing(jnp, jax.lax)(z, w), np.complex64)


@pytest.mark.parametrize("backend", BACKENDS)
def test_psum_and_vmap(backend: str, rng: np.random.Generator) -> None:
    z = random_complex(rng, (3, 5), np.complex64)

    def fn(np_: Any, lax_: Any) -> Callable[[Any], Any]:
        return lambda v: (lax_.psum(v, "i"), np_.sort(v * 1j), np_.cumprod(v), np_.max(v), np_.sin(v) ** v)

    got = run(mlax.vmap(fn(mnp, lax), axis_name="i"), backend, z)
    for g, w in zip(got, jax.vmap(fn(jnp, jax.lax), axis_name="i")(z), strict=True):
        _close(g, w, np.complex64)


HOLOMORPHIC = {
    "trig": lambda np_: lambda z: np_.sin(z) * np_.cos(z / 2) + np_.tan(z / 4) - np_.tanh(z / 3),
    "exp_log": lambda np_: lambda z: np_.expm1(z / 2) * np_.log1p(z) + jax_like(np_).rsqrt(z),
    "pow": lambda np_: lambda z: z ** 3 + z ** (1.5 + 0.5j) + np_.power(2 + 1j, z),
    "inverse": lambda np_: lambda z: np_.arcsin(z / 4) + np_.arccosh(z) * np_.arctanh(z / 5) + np_.sinh(z),
    "product": lambda np_: lambda z: (np_.prod(np_.stack([z, z + 1, z * 2]))
                                      + np_.cumprod(np_.stack([z, z]))[1] * np_.max(np_.stack([z, z / 2]))),
}


def jax_like(np_: Any) -> Any:
    """The lax module next to a numpy module."""
    return lax if np_ is mnp else jax.lax


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(HOLOMORPHIC))
def test_holomorphic_grad(name: str, backend: str, rng: np.random.Generator) -> None:
    z = random_complex(rng, (), np.complex64) / 2 + 1.5
    f, g = HOLOMORPHIC[name](mnp), HOLOMORPHIC[name](jnp)
    _close(run(mlax.grad(f, holomorphic=True), backend, z), jax.grad(g, holomorphic=True)(z), np.complex64)


def _real_loss(np_: Any) -> Callable[[Any], Any]:
    """A real loss through the new ops: max and sort choose, cumsum and gather move, the
    transcendental functions scale."""
    return lambda z: np_.real(np_.sum(np_.sin(z) * np_.cumsum(z)) + np_.sum(np_.sort(z)[::2] ** 2)) + \
        np_.abs(np_.max(z)) + np_.imag(np_.prod(z[:3]) * np_.tanh(z[1]))


@pytest.mark.parametrize(("dtype", "backend"), CASES)
def test_grad_of_real_loss(dtype: Any, backend: str, rng: np.random.Generator, request: Any) -> None:
    _x64(dtype, request)
    z = random_complex(rng, (6,), dtype)
    with jax.enable_x64(dtype == np.complex128):
        want = jax.grad(_real_loss(jnp))(z)
    _close(run(mlax.grad(_real_loss(mnp)), backend, z), want, dtype)


def _window_loss(np_: Any) -> Callable[[Any], Any]:
    """A real loss through conv, reduce_window, scatter-add, dynamic_slice and cumprod."""
    lax_ = jax_like(np_)

    def loss(z: Any) -> Any:
        image = z.reshape(1, 1, 3, 4)
        conv = lax_.conv_general_dilated(image, image[:, :, :2, :2] * 1j, (1, 1), "SAME")
        window = lax_.reduce_window(z.reshape(3, 4), np.zeros((), z.dtype), lax_.add, (2, 2), (1, 1), "VALID")
        scattered = z.at[np.array([1, 5, 5])].add(z[:3] * (1 - 2j))
        moved = lax_.dynamic_slice(np_.cumprod(z / 2), (3,), (4,))
        return np_.real(np_.sum(conv ** 2) + np_.sum(window * np_.conj(window[::-1]))) + \
            np_.imag(np_.sum(scattered * scattered) + np_.sum(moved))

    return loss


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_through_windows_and_indexing(backend: str, rng: np.random.Generator) -> None:
    z = random_complex(rng, (12,), np.complex64)
    _close(run(mlax.grad(_window_loss(mnp)), backend, z), jax.grad(_window_loss(jnp))(z), np.complex64)


@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_blas(dtype: Any, rng: np.random.Generator, request: Any) -> None:
    """cgemm/zgemm on the CPU backend: plain, transposed (x @ w.T) and batched."""
    _x64(dtype, request)
    a, b = random_complex(rng, (3, 17, 9), dtype), random_complex(rng, (3, 9, 5), dtype)
    w = random_complex(rng, (11, 9), dtype)

    def fn(np_: Any) -> Callable[[Any, Any, Any], Any]:
        return lambda a, b, w: (a @ b, np_.matmul(a[0], w.T), np_.einsum("bij,bjk->bik", a, b))

    with jax.enable_x64(dtype == np.complex128):
        want = fn(jnp)(a, b, w)
    text = mlax.jit(fn(mnp)).lower(a, b, w).as_text("llvm")
    assert ("mlax_zgemm" if dtype == np.complex128 else "mlax_cgemm") in text
    for got, expected in zip(mlax.jit(fn(mnp))(a, b, w), want, strict=True):
        _close(got, expected, dtype)


def test_refusals(rng: np.random.Generator) -> None:
    """Ops that jax also refuses on complex values name themselves."""
    z = mnp.asarray(random_complex(rng, (3,), np.complex64))
    with pytest.raises(TypeError, match="comparison_direction LT does not accept complex"):
        lax.lt(z, z)
    with pytest.raises(TypeError, match=r"mlax\.argmax does not support complex"):
        lax.argmax(z, 0, np.int32)
    with pytest.raises(TypeError, match=r"mlax\.floor does not support complex|floating-point"):
        mnp.floor(z)
    with pytest.raises(TypeError, match=r"mlax\.nextafter does not support complex"):
        mlax.jit(lambda z: lax.nextafter(z, z))(z)
