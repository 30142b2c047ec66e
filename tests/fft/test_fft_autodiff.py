"""Derivatives and batching of the FFTs: grad of real-valued losses against jax.grad (jax's
transposes: FFT and IFFT their own, RFFT and IRFFT through the masked inverse kinds, complex
inputs in jax's conjugate convention), against finite differences in float64, jvp against
jax.jvp, and vmap against jax.vmap; on the native CPU backend and on XLA."""

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
from tests.fft.helpers import same
from tests.oracle import random_normal

# (function name, keyword arguments, input dtype, input shape)
CASES = [
    ("fft", {}, np.complex64, (3, 8)),
    ("ifft", dict(n=5, norm="ortho"), np.complex64, (2, 7)),
    ("rfft", {}, np.float32, (4, 9)),
    ("rfft", dict(n=10, norm="forward"), np.float32, (3, 8)),
    ("irfft", {}, np.complex64, (2, 6)),
    ("irfft", dict(n=7), np.complex64, (3, 5)),
    ("hfft", {}, np.complex64, (3, 5)),
    ("ihfft", {}, np.float32, (2, 9)),
    ("fft2", dict(s=(4, 6)), np.float32, (3, 5, 5)),
    ("rfft2", {}, np.float32, (5, 6)),
    ("irfft2", {}, np.complex64, (4, 5)),
    ("rfftn", dict(axes=(0, 2)), np.float32, (5, 3, 7)),
    ("irfftn", dict(s=(3, 4, 5)), np.complex64, (3, 4, 3)),
    ("ifftn", dict(norm="ortho"), np.complex64, (2, 3, 4)),
]


def _loss(module: Any, name: str, kwargs: dict[str, Any], weights: np.ndarray) -> Callable[[Any], Any]:
    """A real-valued function of the transform: linear in its real and imaginary parts (so every
    transpose is exercised as it is) plus a square that makes it nonlinear."""
    def loss(x: Any) -> Any:
        y = getattr(module.fft, name)(x, **kwargs)
        parts = module.stack([module.real(y), module.imag(y)]) if module.iscomplexobj(y) else y[None]
        return module.sum(parts * weights[: parts.shape[0]]) + 0.1 * module.sum(parts ** 2)
    return loss


def _weights(rng: np.random.Generator, name: str, kwargs: dict[str, Any], x: np.ndarray) -> np.ndarray:
    shape = np.shape(getattr(jnp.fft, name)(x, **kwargs))
    real = np.float64 if x.dtype in (np.float64, np.complex128) else np.float32
    return random_normal(rng, (2, *shape), real)


@pytest.mark.parametrize("backend", ["cpu", "xla"])
@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
def test_grad_against_jax(rng: np.random.Generator, backend: str, case: int) -> None:
    name, kwargs, dtype, shape = CASES[case]
    x = random_normal(rng, shape, dtype)
    w = _weights(rng, name, kwargs, x)
    got = mlax.jit(mlax.grad(_loss(mnp, name, kwargs, w)), backend=backend)(x)
    same(got, jax.grad(_loss(jnp, name, kwargs, w))(x), tol=2e-4)


@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
def test_grad_against_finite_differences(rng: np.random.Generator, x64: None, case: int) -> None:
    """dL along v is Re(sum(grad * v)) in jax's convention (for complex and real inputs alike)."""
    name, kwargs, dtype, shape = CASES[case]
    dtype = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    x = random_normal(rng, shape, dtype)
    loss = _loss(mnp, name, kwargs, _weights(rng, name, kwargs, x))
    grad = np.asarray(mlax.jit(mlax.grad(loss))(x))
    for _ in range(2):
        v = random_normal(rng, shape, dtype)
        eps = 1e-6
        numeric = (float(loss(x + eps * v)) - float(loss(x - eps * v))) / (2 * eps)
        np.testing.assert_allclose(np.real(np.sum(grad * v)), numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("backend", ["cpu", "xla"])
@pytest.mark.parametrize("kind", ["FFT", "IFFT", "RFFT", "IRFFT"])
def test_jvp_and_vjp_of_each_kind(rng: np.random.Generator, backend: str, kind: str) -> None:
    lengths = (3, 6) if kind in ("FFT", "RFFT") else (5,)
    shape = (2, *lengths)
    if kind == "IRFFT":
        shape = (2, *lengths[:-1], lengths[-1] // 2 + 1)
    dtype = np.float32 if kind == "RFFT" else np.complex64
    x, t = random_normal(rng, shape, dtype), random_normal(rng, shape, dtype)
    out_shape = np.shape(jax.lax.fft(x, kind, lengths))
    ct = random_normal(rng, out_shape, np.float32 if kind == "IRFFT" else np.complex64)
    fn, jax_fn = (lambda v: lax.fft(v, kind, lengths)), (lambda v: jax.lax.fft(v, kind, lengths))
    same(mlax.jit(lambda a, b: mlax.jvp(fn, (a,), (b,)), backend=backend)(x, t), jax.jvp(jax_fn, (x,), (t,)))
    got = mlax.jit(lambda a, c: mlax.vjp(fn, a)[1](c), backend=backend)(x, ct)
    same(got, jax.vjp(jax_fn, x)[1](ct), tol=1e-4)


class _Namespace:
    """The fft functions and lax of one library, so a case names them once for both."""

    def __init__(self, numpy: Any, lax_module: Any) -> None:
        self.fft, self.lax = numpy.fft, lax_module


MLAX, JAX = _Namespace(mnp, lax), _Namespace(jnp, jax.lax)
VMAP_CASES = [(lambda m: m.fft.fft, 1, np.complex64), (lambda m: m.fft.irfft, 2, np.complex64),
              (lambda m: m.fft.rfft2, 0, np.float32),
              (lambda m: lambda v: m.fft.fftn(v, axes=(0,)), 1, np.float32),
              (lambda m: lambda v: m.lax.fft(v, "IFFT", (3,)), 2, np.complex64)]


@pytest.mark.parametrize("backend", ["eager", "cpu", "xla"])
def test_vmap(rng: np.random.Generator, backend: str) -> None:
    for make, axis, dtype in VMAP_CASES:
        x = random_normal(rng, (4, 3, 6), dtype)
        fn = mlax.vmap(make(MLAX), in_axes=axis)
        got = fn(x) if backend == "eager" else mlax.jit(fn, backend=backend)(x)
        same(got, jax.vmap(make(JAX), in_axes=axis)(x))
