"""mlax.image.resize and scale_and_translate against jax.image: every method, up- and
downscaling with and without antialiasing, integer and bf16 images, zero-size outputs,
eagerly and under mlax.jit; gradients (in the image, and in scale and translation) against
jax.grad; vmap; install_as_jax's jax.image; jax's errors."""

from __future__ import annotations

from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.image as mimage
from tests.oracle import assert_same, check_against_jax, random_array

RNG = np.random.default_rng(5)
IMAGE = random_array(RNG, (2, 7, 9, 3), np.float32)
METHODS = ["nearest", "linear", "cubic", "cubic-pytorch", "lanczos3", "lanczos5", "area"]
SHAPES = [(2, 14, 5, 3), (2, 3, 20, 3)]  # each scales one dimension up, one down


def check(mine: Any, theirs: Any, *args: Any) -> None:
    """Eagerly and under mlax.jit (the native backend: the weights are plain elementwise ops)."""
    expected = jax.jit(theirs)(*args)
    assert_same(mine(*args), expected, rtol=1e-5, atol=1e-5)
    assert_same(mlax.jit(mine)(*args), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("method", METHODS)
def test_resize(method: str) -> None:
    """Up and down, with and without antialiasing, and the same size: one program for all."""
    def call(image_module: Any) -> Any:
        return lambda x: [image_module.resize(x, shape, method, antialias=aa) for shape in SHAPES
                          for aa in (True, False)] + [image_module.resize(x, x.shape, method)]

    check(call(mimage), call(jax.image), IMAGE)


@pytest.mark.parametrize(("dtype", "method"), [(np.uint8, "bilinear"), (np.int32, "nearest"),
                                               (ml_dtypes.bfloat16, "cubic"), (np.float16, "lanczos3")])
def test_resize_dtypes(dtype: Any, method: str) -> None:
    x = random_array(RNG, (6, 5), dtype, 0, 100)
    tol = {np.dtype(ml_dtypes.bfloat16): 2e-2, np.dtype(np.float16): 2e-3}.get(np.dtype(dtype), 1e-5)
    check_against_jax(lambda v: mimage.resize(v, (4, 9), method),
                      jax.jit(lambda v: jax.image.resize(v, (4, 9), method)), x, rtol=tol, atol=tol,
                      jit=False)


def test_resize_empty_output() -> None:
    check_against_jax(lambda v: mimage.resize(v, (2, 0, 4, 3), "linear"),
                      lambda v: jax.image.resize(v, (2, 0, 4, 3), "linear"), IMAGE, jit=False)


@pytest.mark.parametrize("method", ["linear", "cubic", "cubic-pytorch", "lanczos3", "area"])
def test_scale_and_translate(method: str) -> None:
    scale, translation = np.array([1.7, 0.6], np.float32), np.array([-0.4, 1.3], np.float32)

    def call(image_module: Any) -> Any:
        return lambda x, s, t: [image_module.scale_and_translate(x, (2, 11, 6, 3), (1, 2), s, t, method,
                                                                 antialias=aa) for aa in (True, False)]

    check(call(mimage), call(jax.image), IMAGE, scale, translation)


def test_gradients() -> None:
    """In the image through resize; in the image, scale and translation through scale_and_translate."""
    def loss(image_module: Any) -> Any:
        def total(x: Any, s: Any, t: Any) -> Any:
            up = image_module.resize(x, (2, 10, 4, 3), "cubic")
            moved = image_module.scale_and_translate(x, (2, 9, 8, 3), (1, 2), s, t, "linear")
            return (up ** 2).sum() + (moved * x[:, :1, :1]).sum()

        return total

    args = (IMAGE, np.array([1.3, 0.8], np.float32), np.array([0.2, -0.5], np.float32))
    expected = jax.jit(jax.grad(loss(jax.image), (0, 1, 2)))(*args)
    assert_same(mlax.grad(loss(mimage), (0, 1, 2))(*args), expected, rtol=1e-4, atol=1e-4)


def test_vmap_and_install_as_jax() -> None:
    fn = lambda image_module: lambda x: image_module.resize(x, (5, 12, 3), "lanczos3")  # noqa: E731
    assert_same(mlax.vmap(fn(mimage))(IMAGE), jax.jit(jax.vmap(fn(jax.image)))(IMAGE), rtol=1e-5, atol=1e-5)
    from mlax.jax_modules import REDIRECTS

    assert REDIRECTS["jax.image"].mlax_module == "mlax.image"
    assert mimage.ResizeMethod is jax.image.ResizeMethod


ERRORS = [
    (ValueError, lambda im: im.resize(IMAGE, (3, 4), "linear")),  # rank mismatch
    (ValueError, lambda im: im.resize(IMAGE, (2, 3, 4, 3), "bogus")),
    (ValueError, lambda im: im.scale_and_translate(IMAGE, (2, 3, 4, 3), (1,), np.ones(1), np.zeros(1),
                                                   "nearest")),
]


@pytest.mark.parametrize(("error", "call"), ERRORS)
def test_errors(error: type[Exception], call: Any) -> None:
    with pytest.raises(error):
        call(jax.image)
    with pytest.raises(error):
        call(mimage)
