"""mlax.image: resize and scale_and_translate (as jax.image).

Resampling is separable: along each spatial dimension the output is the input times a
weight matrix (input size x output size) whose column j holds the kernel (triangle, Keys
cubic, Lanczos, box for 'area') centred on output pixel j's sample position, normalised to
sum to one; all dimensions contract in one einsum. With ``antialias`` a downscale widens the
kernel by the inverse scale, so every input pixel contributes. Output pixels whose sample
falls outside the input are zero, except for 'cubic-pytorch' without antialiasing, which
repeats the edge pixels as PyTorch does. 'nearest' indexes instead of contracting. The
weights are built from mlax.numpy ops, so a traced scale or translation is differentiable.
``ResizeMethod`` is jax's enum.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax.image import ResizeMethod

from mlax import numpy as mnp
from mlax.numpy.util import asarray, promote_args_inexact


def _triangle(x: Any) -> Any:
    return mnp.maximum(0, 1 - mnp.abs(x))


def _cubic(a: float) -> Callable[[Any], Any]:
    """The cubic convolution kernel with parameter ``a``: Keys' (-0.5) or OpenCV's and
    PyTorch's (-0.75), for |x| < 2."""
    def kernel(x: Any) -> Any:
        near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
        far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
        return mnp.where(x >= 2.0, 0.0, mnp.where(x >= 1.0, far, near))

    return kernel


def _lanczos(radius: float) -> Callable[[Any], Any]:
    """sinc(x) sinc(x / radius) within ``radius``; 1 near 0, where the quotient loses precision."""
    def kernel(x: Any) -> Any:
        y = radius * mnp.sin(np.pi * x) * mnp.sin(np.pi * x / radius)
        out = mnp.where(x > 1e-3, y / mnp.where(x != 0, np.pi ** 2 * x ** 2, 1), 1)
        return mnp.where(x > radius, 0.0, out)

    return kernel


_AREA = "area"  # the box kernel: overlap of pixel intervals, not a function of the distance
# (radius, kernel) by method: the radius bounds the support, for the edge padding.
_KERNELS: dict[ResizeMethod, tuple[int, Any]] = {
    ResizeMethod.LINEAR: (1, _triangle), ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)), ResizeMethod.CUBIC: (2, _cubic(-0.5)),
    ResizeMethod.CUBIC_PYTORCH: (2, _cubic(-0.75)), ResizeMethod.AREA: (1, _AREA),
}


def _normalized(weights: Any) -> Any:
    """Columns scaled to sum to one; columns summing to about zero become zero."""
    total = mnp.sum(weights, axis=0, keepdims=True)
    safe = mnp.true_divide(weights, mnp.where(mnp.not_equal(total, 0), total, 1))
    return mnp.where(mnp.greater(mnp.abs(total), 1000.0 * float(np.finfo(np.float32).eps)), safe, 0)


def _weight_matrix(in_size: int, out_size: int, scale: Any, translation: Any, kernel: Any, antialias: bool,
                   edge_padding: bool, radius: int) -> Any:
    """The (in_size, out_size) resampling weights of one dimension."""
    dtype = mnp.result_type(scale, translation)
    inv_scale = mnp.true_divide(1.0, scale)
    kernel_scale = mnp.maximum(inv_scale, 1.0) if antialias else 1.0
    outputs = mnp.arange(out_size, dtype=dtype)
    # The input coordinate each output pixel samples (pixel centres at +0.5).
    sample = mnp.subtract(mnp.subtract(mnp.multiply(mnp.add(outputs, 0.5), inv_scale),
                                       mnp.multiply(translation, inv_scale)), 0.5)
    pad = radius if edge_padding else 0  # edge padding comes without antialiasing only
    taps = mnp.arange(-pad, in_size + pad, dtype=dtype)
    if kernel is _AREA:
        left = mnp.subtract(mnp.multiply(outputs, inv_scale), mnp.multiply(translation, inv_scale))
        right = mnp.add(left, inv_scale)
        inputs = mnp.arange(in_size, dtype=dtype)
        overlap = mnp.subtract(mnp.minimum(right[None, :], mnp.add(inputs, 1.0)[:, None]),
                               mnp.maximum(left[None, :], inputs[:, None]))
        weights = mnp.maximum(0.0, overlap)
    else:
        weights = kernel(mnp.true_divide(mnp.abs(mnp.subtract(sample[None, :], taps[:, None])), kernel_scale))
    if edge_padding:
        # Taps past an edge add their weight to the edge pixel.
        folds = np.zeros((in_size, in_size + 2 * pad), weights.dtype)
        folds[np.clip(np.arange(-pad, in_size + pad), 0, in_size - 1), np.arange(in_size + 2 * pad)] = 1
        return _normalized(mnp.matmul(folds, weights))
    inside = mnp.logical_and(mnp.greater_equal(sample, -0.5), mnp.less_equal(sample, in_size - 0.5))
    return mnp.where(inside[None, :], _normalized(weights), 0)


def _scale_and_translate(x: Any, shape: tuple[int, ...], dims: Sequence[int], scales: Sequence[Any],
                         translations: Sequence[Any], method: ResizeMethod, antialias: bool,
                         precision: Any) -> Any:
    if not dims:
        return x
    radius, kernel = _KERNELS[method]
    edge_padding = method is ResizeMethod.CUBIC_PYTORCH and not antialias
    operands: list[Any] = [x, list(range(x.ndim))]
    out_indices = list(range(x.ndim))
    for i, d in enumerate(dims):
        w = _weight_matrix(x.shape[d], shape[d], scales[i], translations[i], kernel, antialias, edge_padding,
                           radius)
        operands += [w.astype(x.dtype), [d, x.ndim + i]]
        out_indices[d] = x.ndim + i
    return mnp.einsum(*operands, out_indices, precision=precision)


def _method(method: str | ResizeMethod) -> ResizeMethod:
    return ResizeMethod.from_string(method) if isinstance(method, str) else ResizeMethod(method)


def _shape(shape: Sequence[int], image: Any) -> tuple[int, ...]:
    shape = tuple(operator.index(d) for d in shape)
    if len(shape) != image.ndim:
        raise ValueError(f"shape must have length equal to the number of dimensions of x;  {shape} vs "
                         f"{image.shape}")
    return shape


def _resize_nearest(x: Any, shape: tuple[int, ...]) -> Any:
    for d, (m, n) in enumerate(zip(x.shape, shape, strict=True)):
        if m != n:
            # As jax: the centre of output pixel j, in float32, lands in input pixel floor(.).
            centres = (np.arange(n, dtype=np.float32) + np.float32(0.5)) * np.float32(m) / np.float32(n)
            x = mnp.take(x, np.floor(centres).astype(np.int32), axis=d)
    return x


def resize(image: Any, shape: Sequence[int], method: str | ResizeMethod, antialias: bool = True,
           precision: Any = None) -> Any:
    """``image`` resampled to ``shape``: 'nearest', 'linear' ('bilinear', 'trilinear'),
    'cubic' ('bicubic', 'tricubic'), 'cubic-pytorch', 'lanczos3', 'lanczos5' or 'area'."""
    image = asarray(image)
    shape = _shape(shape, image)
    method = _method(method)
    if method is ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    (image,) = promote_args_inexact("resize", image)
    dims = [d for d in range(image.ndim) if image.shape[d] != shape[d]]
    if method is ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    scales = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    return _scale_and_translate(image, shape, dims, scales, [0.0] * len(dims), method, antialias, precision)


def scale_and_translate(image: Any, shape: Sequence[int], spatial_dims: Sequence[int], scale: Any,
                        translation: Any, method: str | ResizeMethod, antialias: bool = True,
                        precision: Any = None) -> Any:
    """``image`` resampled to ``shape`` so that input coordinate x of ``spatial_dims[i]`` lands
    at ``x * scale[i] + translation[i]`` (pixel centres at +0.5); samples outside the input
    are zero. Any method but 'nearest'."""
    image = asarray(image)
    shape = _shape(shape, image)
    method = _method(method)
    if method is ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for scale_and_translate.")
    if method is ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    (image,) = promote_args_inexact("scale_and_translate", image)
    scale, translation = promote_args_inexact("scale_and_translate", scale, translation)
    dims = [operator.index(d) % image.ndim for d in spatial_dims]
    if not (len(dims) == scale.shape[0] == translation.shape[0]):
        raise ValueError(f"scale_and_translate: spatial_dims, scale and translation must have one length, "
                         f"got {len(dims)}, {scale.shape[0]} and {translation.shape[0]}")
    count = len(dims)
    return _scale_and_translate(image, shape, dims, [scale[i] for i in range(count)],
                                [translation[i] for i in range(count)], method, antialias, precision)


__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
