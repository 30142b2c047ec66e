"""complex64/complex128 against jax: the dtype, the new primitives, arithmetic and math through
jnp, eagerly, under jit on the native and XLA backends, under vmap, and the refusals."""

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

BACKENDS = ("eager", "cpu", "xla")
# jax warns when a complex value converts to a real type (mlax converts the real part, as jax does).
pytestmark = pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning",
                                        "ignore:Casting from complex:DeprecationWarning")

RTOL = {np.dtype(np.complex64): 2e-5, np.dtype(np.complex128): 1e-12,
        np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12, np.dtype(np.bool_): 0}


def random_complex(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    parts = rng.uniform(-3, 3, size=(2, *shape))
    return (parts[0] + 1j * parts[1]).astype(dtype)


def run(fn: Callable[..., Any], backend: str, *args: Any) -> Any:
    if backend == "eager":
        return fn(*args)
    return mlax.jit(fn, backend=None if backend == "cpu" else backend)(*args)


def check(got: Any, want: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=RTOL[want.dtype], atol=RTOL[want.dtype])


# (name, function of the numpy module) -> applied to one complex array
UNARY: dict[str, Callable[[Any], Callable[[Any], Any]]] = {
    "neg": lambda np_: lambda z: -z,
    "exp": lambda np_: np_.exp,
    "log": lambda np_: np_.log,
    "sqrt": lambda np_: np_.sqrt,
    "abs": lambda np_: np_.abs,
    "sign": lambda np_: np_.sign,
    "real": lambda np_: np_.real,
    "imag": lambda np_: np_.imag,
    "conj": lambda np_: np_.conj,
    "angle": lambda np_: np_.angle,
    "attributes": lambda np_: lambda z: z.real * 2 + z.imag - z.conj(),
    "sum": lambda np_: lambda z: np_.sum(z, axis=0),
    "to_real": lambda np_: lambda z: z.astype(np_.float32),
    "weak_scalars": lambda np_: lambda z: z * (1 - 2j) + 3.5 - 1j,
    "select": lambda np_: lambda z: np_.where(np_.real(z) > 0, z, 1j),
    "shape_ops": lambda np_: lambda z: np_.concatenate([z.T.reshape(-1), z[1:, ::2].reshape(-1)]),
    "eq_ne": lambda np_: lambda z: (z == z * 1) & (z != z + 1j),
    "iscomplex": lambda np_: lambda z: np_.iscomplex(z * np_.real(z)),
}

BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "matmul": lambda a, b: a @ b.T,
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_unary(name: str, dtype: Any, backend: str, rng: np.random.Generator, request: Any) -> None:
    if dtype == np.complex128:
        request.getfixturevalue("x64")
    z = random_complex(rng, (4, 3), dtype)
    with jax.enable_x64(dtype == np.complex128):
        want = UNARY[name](jnp)(z)
    check(run(UNARY[name](mnp), backend, z), want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_binary(name: str, dtype: Any, backend: str, rng: np.random.Generator, request: Any) -> None:
    if dtype == np.complex128:
        request.getfixturevalue("x64")
    a, b = random_complex(rng, (3, 5), dtype), random_complex(rng, (3, 5), dtype)
    with jax.enable_x64(dtype == np.complex128):
        want = BINARY[name](jnp.asarray(a), jnp.asarray(b))
    check(run(BINARY[name], backend, a, b), want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lax_primitives(backend: str, rng: np.random.Generator) -> None:
    x, y = rng.normal(size=(2, 6)).astype(np.float32)
    fn = lambda np_lax: lambda x, y: np_lax.conj(np_lax.complex(x, y)) * np_lax.complex(y, x)  # noqa: E731
    z = run(fn(lax), backend, x, y)
    check(z, fn(jax.lax)(x, y))
    check(run(lambda z: (lax.real(z), lax.imag(z)), backend, z)[1], jax.lax.imag(np.asarray(z)))


def test_promotion_and_constructors(rng: np.random.Generator) -> None:
    z = random_complex(rng, (3,), np.complex64)
    x = rng.normal(size=3).astype(np.float32)
    assert (mnp.asarray(x) * 1j).dtype == (jnp.asarray(x) * 1j).dtype == np.complex64
    assert (mnp.asarray(z) * mnp.asarray(x)).dtype == np.complex64
    assert mnp.result_type(np.float32, 1j) == jnp.result_type(np.float32, 1j)
    assert mnp.asarray(np.complex128(1 + 2j)).dtype == np.complex64  # no x64
    check(mnp.complex64(3 - 1j), jnp.complex64(3 - 1j))
    assert mnp.iscomplexobj(mnp.asarray(z)) and not mnp.iscomplexobj(mnp.asarray(x))
    check(mnp.imag(x), jnp.imag(x))
    check(mnp.angle(x), jnp.angle(x))
    check(mnp.conj(x), jnp.conj(x))


@pytest.mark.parametrize("backend", ("cpu", "xla"))
def test_vmap(backend: str, rng: np.random.Generator) -> None:
    z = random_complex(rng, (5, 4), np.complex64)
    fn = lambda np_: lambda z: np_.abs(z) * np_.real(np_.exp(np_.conj(z) / 3)) + np_.sum(z * z)  # noqa: E731
    check(run(mlax.vmap(fn(mnp)), backend, z), jax.vmap(fn(jnp))(z))
    parts = rng.normal(size=(2, 5, 4)).astype(np.float32)
    check(mlax.vmap(lax.complex)(*parts), jax.vmap(jax.lax.complex)(*parts))


@pytest.mark.parametrize("backend", ("eager", "cpu", "xla"))
def test_large_complex_constants(backend: str, rng: np.random.Generator, x64: None) -> None:
    """From 100 elements on MLIR prints a dense attribute as one hex string of its buffer; passes
    that read complex constants back (cleanup, the interpreter) decode it."""
    def with_table(np_: Any, table: np.ndarray) -> Callable[[Any], Any]:
        return lambda z: z * np_.asarray(table) + np_.asarray(table)[::-1]

    for dtype in (np.complex64, np.complex128):
        table, z = random_complex(rng, (3, 50), dtype), random_complex(rng, (3, 50), dtype)
        check(run(with_table(mnp, table), backend, z), with_table(jnp, table)(z))


def test_refusals(rng: np.random.Generator) -> None:
    z = mnp.asarray(random_complex(rng, (3,), np.complex64))
    with pytest.raises(TypeError, match="comparison_direction LT does not accept complex"):
        lax.lt(z, z)
    with pytest.raises(TypeError, match=r"mlax\.rem does not support complex"):
        lax.rem(z, z)
    with pytest.raises(TypeError, match=r"mlax\.cbrt does not support complex|floating-point"):
        lax.cbrt(z)
    with pytest.raises(TypeError, match="real does not accept dtype float32"):
        lax.real(mnp.ones(3))
    with pytest.raises(TypeError, match="complex does not accept dtype int32 at position 0"):
        lax.complex(mnp.ones(3, mnp.int32), mnp.ones(3, mnp.int32))
    with pytest.raises(TypeError, match=r"mlax\.rem does not support complex"):
        mlax.jit(lambda z: lax.rem(z, z))(z)
