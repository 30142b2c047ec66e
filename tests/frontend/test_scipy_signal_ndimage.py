"""mlax.scipy.signal (convolve, correlate, their 2-D forms, detrend) and mlax.scipy.ndimage
(map_coordinates) against jax.scipy: random shapes in 1-3 dimensions, every mode, either operand
the larger, integer inputs; eagerly and under mlax.jit (both backends), grad, vmap; the errors."""

from __future__ import annotations

from typing import Any

import jax
import jax.scipy.ndimage as jnd
import jax.scipy.signal as jsig
import numpy as np
import pytest

import mlax
import mlax.scipy.ndimage as mnd
import mlax.scipy.signal as msig
from tests.oracle import assert_same, check_against_jax, random_array

TOL = dict(rtol=2e-5, atol=2e-5)


def _pair(rng: np.random.Generator, ndim: int) -> tuple[np.ndarray, np.ndarray]:
    big = tuple(int(d) for d in rng.integers(3, 7, size=ndim))
    small = tuple(int(rng.integers(1, d + 1)) for d in big)
    return random_array(rng, big, np.float32), random_array(rng, small, np.float32)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_convolve_correlate(rng: np.random.Generator, name: str, ndim: int) -> None:
    big, small = _pair(rng, ndim)
    for mode in ("full", "same", "valid"):
        for x, y in ((big, small), (small, big), (big, big)):
            check_against_jax(lambda u, v, m=mode: getattr(msig, name)(u, v, m),
                              lambda u, v, m=mode: getattr(jsig, name)(u, v, m), x, y, **TOL)


@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
def test_two_dimensional(rng: np.random.Generator, name: str) -> None:
    big, small = _pair(rng, 2)
    for mode in ("full", "same", "valid"):
        for x, y in ((big, small), (small, big), (big, big)):
            check_against_jax(lambda u, v, m=mode: getattr(msig, name)(u, v, m),
                              lambda u, v, m=mode: getattr(jsig, name)(u, v, m), x, y, **TOL)


def test_integer_inputs_promote(rng: np.random.Generator) -> None:
    x, y = rng.integers(-5, 5, size=(7,)).astype(np.int32), rng.integers(-5, 5, size=(3,)).astype(np.int32)
    check_against_jax(lambda u, v: msig.convolve(u, v), lambda u, v: jsig.convolve(u, v), x, y)


def test_convolve_grad_and_vmap(rng: np.random.Generator) -> None:
    big, small = _pair(rng, 2)

    def loss(lib: Any) -> Any:
        return lambda u, v: (lib.scipy.signal.correlate2d(u, v, "same") ** 2).sum()

    expected = jax.grad(loss(jax), argnums=(0, 1))(big, small)
    assert_same(mlax.grad(loss(mlax), argnums=(0, 1))(big, small), expected, rtol=1e-4, atol=1e-4)
    batch = np.stack([big, big * 0.5 + 1])
    assert_same(mlax.vmap(lambda u: msig.convolve(u, small, "valid"))(batch),
                jax.vmap(lambda u: jsig.convolve(u, small, "valid"))(batch), **TOL)


@pytest.mark.parametrize("kwargs", [{}, {"type": "constant"}, {"bp": [3, 9]}, {"axis": 0}, {"bp": 11},
                                    {"type": "constant", "axis": 1}])
def test_detrend(rng: np.random.Generator, kwargs: dict[str, Any]) -> None:
    x = random_array(rng, (4, 12), np.float32) + np.linspace(0, 5, 12, dtype=np.float32)
    check_against_jax(lambda v: msig.detrend(v, **kwargs), lambda v: jsig.detrend(v, **kwargs), x, rtol=1e-4,
                      atol=2e-5)
    check_against_jax(lambda v: msig.detrend(v, **kwargs), lambda v: jsig.detrend(v, **kwargs),
                      x.astype(np.int32), rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("mode", ["constant", "nearest", "wrap", "mirror", "reflect"])
def test_map_coordinates(rng: np.random.Generator, order: int, mode: str) -> None:
    image = random_array(rng, (5, 1, 6), np.float32)
    coords = [rng.uniform(-3, n + 2, size=(4, 3)).astype(np.float32) for n in image.shape]
    coords[0][0, 0] = 2.5  # a half to round away from zero
    check_against_jax(lambda im, *c: mnd.map_coordinates(im, c, order, mode, cval=0.75),
                      lambda im, *c: jnd.map_coordinates(im, c, order, mode, cval=0.75), image, *coords,
                      **TOL)
    ints = rng.integers(-50, 50, size=(6, 7)).astype(np.int32)
    check_against_jax(lambda im, *c: mnd.map_coordinates(im, c, order, mode),
                      lambda im, *c: jnd.map_coordinates(im, c, order, mode), ints, *coords[:1], coords[2])


def test_map_coordinates_grad_and_vmap(rng: np.random.Generator) -> None:
    image = random_array(rng, (6, 5), np.float32)
    coords = [rng.uniform(0, 4, size=(7,)).astype(np.float32) for _ in range(2)]

    def loss(lib: Any) -> Any:
        return lambda im, c0, c1: (lib.scipy.ndimage.map_coordinates(im, [c0, c1], 1, "reflect") ** 2).sum()

    assert_same(mlax.grad(loss(mlax), argnums=(0, 1, 2))(image, *coords),
                jax.grad(loss(jax), argnums=(0, 1, 2))(image, *coords), rtol=1e-4, atol=1e-5)
    batch = np.stack([image, image * 2])
    assert_same(mlax.vmap(lambda im: mnd.map_coordinates(im, coords, 1))(batch),
                jax.vmap(lambda im: jnd.map_coordinates(im, coords, 1))(batch), **TOL)


def test_errors() -> None:
    x, y = np.ones((4, 3), np.float32), np.ones((2, 5), np.float32)
    with pytest.raises(ValueError, match="smaller than the other"):
        msig.convolve(x, y)
    with pytest.raises(ValueError, match="mode must be"):
        msig.convolve(x, x, "circular")
    with pytest.raises(ValueError, match="same number of dimensions"):
        msig.convolve(x, np.ones(3, np.float32))
    with pytest.raises(ValueError, match="zero-size"):
        msig.convolve(x, np.ones((0, 1), np.float32))
    with pytest.raises(NotImplementedError, match="boundary='fill'"):
        msig.convolve2d(x, x, boundary="wrap")
    with pytest.raises(ValueError, match="2-dimensional"):
        msig.correlate2d(x[0], x[0])
    with pytest.raises(ValueError, match="method"):
        msig.convolve(x, x, method="winograd")
    with pytest.raises(ValueError, match="Breakpoints"):
        msig.detrend(x, bp=9)
    with pytest.raises(ValueError, match="linear' or 'constant"):
        msig.detrend(x, type="quadratic")
    with pytest.raises(ValueError, match="length input.ndim"):
        mnd.map_coordinates(x, [np.zeros(2)], 1)
    with pytest.raises(NotImplementedError, match="order<=1"):
        mnd.map_coordinates(x, [np.zeros(2), np.zeros(2)], 3)
    with pytest.raises(NotImplementedError, match="mode"):
        mnd.map_coordinates(x, [np.zeros(2), np.zeros(2)], 1, "grid-wrap")
