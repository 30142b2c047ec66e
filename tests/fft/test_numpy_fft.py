"""mlax.numpy.fft against jax.numpy.fft: every function, every input dtype, odd and
non-power-of-2 shapes, n/s smaller and larger than the axis, axes in any order, every norm;
eagerly, on the native CPU backend and on XLA. Then the frequency and shift helpers, and the
errors."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.fft.helpers import BACKENDS, same
from tests.oracle import random_normal, run

ONE_AXIS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
TWO_AXES = ["fft2", "ifft2", "rfft2", "irfft2"]
N_AXES = ["fftn", "ifftn", "rfftn", "irfftn"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "rfftn"}

# (input shape, keyword arguments) per family: defaults, then n/s cutting and padding, other axes, norms.
VARIANTS = {
    "one": [((3, 10), {}), ((5, 7, 4), dict(n=5, axis=0, norm="ortho")),
            ((4, 9), dict(n=13, axis=-1, norm="forward")), ((6, 3), dict(n=6, axis=0, norm="backward"))],
    "two": [((4, 6), {}), ((5, 3, 8), dict(s=(3, 9), axes=(0, 2), norm="ortho")),
            ((7, 5), dict(s=(6, 4), axes=(-1, 0), norm="forward"))],
    "n": [((3, 4, 5), {}), ((6, 5, 2), dict(s=(4, 7), norm="ortho")),
          ((4, 3, 5), dict(axes=(2, 0), norm="forward")), ((2, 3, 2, 4), dict(norm="backward"))],
}


def _family(name: str) -> str:
    return "one" if name in ONE_AXIS else "two" if name in TWO_AXES else "n"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ONE_AXIS + TWO_AXES + N_AXES)
def test_against_jax(rng: np.random.Generator, dtype: Any, backend: str, name: str) -> None:
    if name in REAL_ONLY and np.dtype(dtype).kind == "c":
        x = random_normal(rng, (3, 4), dtype)
        with pytest.raises(ValueError, match="only real valued inputs"):
            run(getattr(mnp.fft, name), backend, x)
        return
    for shape, kwargs in VARIANTS[_family(name)]:
        x = random_normal(rng, shape, dtype)
        same(run(lambda v, kwargs=kwargs: getattr(mnp.fft, name)(v, **kwargs), backend, x),
             getattr(jnp.fft, name)(x, **kwargs))


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_integer_input_and_large_odd_lengths(rng: np.random.Generator, backend: str) -> None:
    x = rng.integers(-9, 9, (2, 97)).astype(np.int32)
    for name in ("fft", "rfft", "ifft", "hfft"):
        same(run(getattr(mnp.fft, name), backend, x), getattr(jnp.fft, name)(x), tol=1e-4)
    y = random_normal(rng, (3, 1000), np.float32)
    same(run(mnp.fft.rfft, backend, y), jnp.fft.rfft(y), tol=1e-4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_frequencies_and_shifts(rng: np.random.Generator, backend: str) -> None:
    for n, d in ((8, 1.0), (7, 0.25), (1, 2.0)):
        same(mnp.fft.fftfreq(n, d), jnp.fft.fftfreq(n, d))
        same(mnp.fft.rfftfreq(n, d), jnp.fft.rfftfreq(n, d))
    same(mnp.fft.fftfreq(5, dtype=np.int32), jnp.fft.fftfreq(5, dtype=np.int32))
    x = random_normal(rng, (5, 6, 3), np.float32)
    for axes in (None, 0, (1, 2), (-1,)):
        for shift in ("fftshift", "ifftshift"):
            same(run(lambda v, axes=axes, shift=shift: getattr(mnp.fft, shift)(v, axes), backend, x),
                 getattr(jnp.fft, shift)(x, axes))


def test_under_jit_the_sizes_are_static(rng: np.random.Generator) -> None:
    """A transform of every function in one program (one compile), against jax.jit."""
    x = random_normal(rng, (4, 6), np.complex64)

    def every(module: Any, v: Any) -> list[Any]:
        f = module.fft
        return [f.fft(v), f.ifft2(v), f.fftn(v, s=(3, 3)), f.irfft(v), f.hfft(v, n=9), f.irfftn(v),
                f.fftshift(f.ifftn(v, axes=(0,)))]

    got = mlax.jit(lambda v: every(mnp, v))(x)
    for a, e in zip(got, jax.jit(lambda v: every(jnp, v))(x), strict=True):
        same(a, e)


def test_errors_are_jaxs() -> None:
    x = np.ones((3, 4), np.float32)
    cases = [
        (lambda m: m.fft.fft([1.0, 2.0]), TypeError, "requires ndarray or scalar arguments"),
        (lambda m: m.fft.fft(x, norm="bad"), ValueError, "Invalid norm value bad"),
        (lambda m: m.fft.fftn(x, axes=(0, 0)), ValueError, "does not support repeated axes"),
        (lambda m: m.fft.fft(x, axis=(0,)), ValueError, "does not support multiple axes"),
        (lambda m: m.fft.fft2(x, axes=(0,)), ValueError, "only supports 2 axes"),
        (lambda m: m.fft.fftn(x, s=(0,)), ValueError, "Shape should be positive"),
        (lambda m: m.fft.fftn(x, s=(2,), axes=(0, 1)), ValueError, "Shape and axes have different lengths"),
        (lambda m: m.fft.fftfreq([3]), ValueError, "only takes an int"),
        (lambda m: m.fft.rfftfreq(3, d=[1.0]), ValueError, "only takes a single value"),
    ]
    for case, kind, message in cases:
        with pytest.raises(kind, match=message):
            case(jnp)
        with pytest.raises(kind, match=message):
            case(mnp)


def test_install_as_jax_redirects_numpy_fft() -> None:
    from mlax import jax_modules

    assert jax_modules.resolve("jax.numpy.fft", "rfft2", {}) is mnp.fft.rfft2
    assert jax_modules.status("jax.lax", "fft") == "mlax"
