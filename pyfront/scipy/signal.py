"""mlax.scipy.signal: direct and FFT N-d convolution, correlation, and detrend.

A convolution of two arrays is one ``lax.conv_general_dilated`` with a single batch element
and channel: the larger operand is the image, the smaller one, reversed, the kernel, and the
mode picks the padding ("full": every overlap, "valid": complete overlaps only, "same": the
first operand's shape, centred as SciPy centres it). fftconvolve is jax's: the product of the
(real when the inputs are) spectra at the full size, cut to the mode; `axes` maps the others with
vmap. The spectral estimates (stft, istft, csd, welch) are in signal_spectral.py.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

import mlax.numpy as mnp
from mlax import lax
from mlax.batching import vmap
from mlax.numpy.util import check_arraylike, normalize_axis, promote_dtypes_inexact
from mlax.scipy.signal_spectral import csd, detrend, istft, stft, welch

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend", "fftconvolve", "istft",
           "stft", "welch"]

_MODES = ("full", "same", "valid")


def _convolve_nd(in1: Any, in2: Any, mode: str, precision: Any) -> Any:
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    in1, in2 = mnp.asarray(in1), mnp.asarray(in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes {in1.shape} and "
                         f"{in2.shape}.")
    in1, in2 = promote_dtypes_inexact(in1, in2)
    first_larger = all(a >= b for a, b in zip(in1.shape, in2.shape, strict=True))
    if not (first_larger or all(a <= b for a, b in zip(in1.shape, in2.shape, strict=True))):
        raise ValueError("One input must be smaller than the other in every dimension.")
    second_shape = in2.shape
    image, kernel = (in1, in2) if first_larger else (in2, in1)
    if mode == "valid":
        padding = [(0, 0)] * kernel.ndim
    elif mode == "full":
        padding = [(k - 1, k - 1) for k in kernel.shape]
    else:  # "same": the output has in1's shape, centred on in2's middle element
        padding = [(k - 1 - (s - 1) // 2, k - s + (s - 1) // 2) for k, s in zip(kernel.shape, second_shape,
                                                                                   strict=True)]
    out = lax.conv_general_dilated(image[None, None], mnp.flip(kernel)[None, None], (1,) * kernel.ndim,
                                   padding, precision=precision)
    return out[0, 0]


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto", precision: Any = None) -> Any:
    """scipy.signal.convolve: directly ("auto", "direct") or through FFTs ("fft")."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method not in ("auto", "direct"):
        raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")
    return _convolve_nd(in1, in2, mode, precision)


def fftconvolve(in1: Any, in2: Any, mode: str = "full", axes: Sequence[int] | None = None) -> Any:
    """scipy.signal.fftconvolve: the convolution over ``axes`` (all by default) through FFTs."""
    check_arraylike("fftconvolve", in1, in2)
    in1, in2 = promote_dtypes_inexact(mnp.asarray(in1), mnp.asarray(in2))
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in _MODES:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    convolve_all = functools.partial(_fftconvolve_unbatched, mode=mode)
    if axes is None:
        return convolve_all(in1, in2)
    axes = tuple(normalize_axis("fftconvolve", ax, in1.ndim) for ax in (axes if isinstance(axes, Sequence)
                                                                          else (axes,)))
    mapped = sorted(set(range(in1.ndim)) - set(axes))
    if any(in1.shape[i] != in2.shape[i] for i in mapped):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape} in2.shape={in2.shape} "
                         f"axes={axes}")
    for ax in mapped:
        convolve_all = vmap(convolve_all, in_axes=ax, out_axes=ax)
    return convolve_all(in1, in2)


def _fftconvolve_unbatched(in1: Any, in2: Any, mode: str) -> Any:
    full_shape = tuple(a + b - 1 for a, b in zip(in1.shape, in2.shape, strict=True))
    if mode == "valid":
        swap = all(a <= b for a, b in zip(in1.shape, in2.shape, strict=True))
        if not (swap or all(a >= b for a, b in zip(in1.shape, in2.shape, strict=True))):
            raise ValueError("For 'valid' mode, One input must be at least as large as the other in every "
                             "dimension.")
        if swap:
            in1, in2 = in2, in1
    if all(a == 1 or b == 1 for a, b in zip(in1.shape, in2.shape, strict=True)):
        conv = in1 * in2
    else:
        complex_input = mnp.iscomplexobj(in1)
        forward, inverse = (mnp.fft.fftn, mnp.fft.ifftn) if complex_input else (mnp.fft.rfftn, mnp.fft.irfftn)
        conv = inverse(forward(in1, full_shape) * forward(in2, full_shape), full_shape)
    out_shape = {"full": full_shape, "same": in1.shape,
                 "valid": tuple(a - b + 1 for a, b in zip(in1.shape, in2.shape, strict=True))}[mode]
    starts = tuple((n - m) // 2 for n, m in zip(full_shape, out_shape, strict=True))
    return lax.dynamic_slice(conv, starts, out_shape)


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto", precision: Any = None) -> Any:
    """scipy.signal.correlate: the convolution with ``in2`` reversed (and conjugated)."""
    return convolve(in1, mnp.flip(mnp.asarray(in2).conj()), mode, method, precision)


def _two_dimensional(name: str, in1: Any, in2: Any, boundary: str, fillvalue: Any) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill", fillvalue: Any = 0,
               precision: Any = None) -> Any:
    """scipy.signal.convolve2d with zero fill."""
    _two_dimensional("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode, precision)


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill", fillvalue: Any = 0,
                precision: Any = None) -> Any:
    """scipy.signal.correlate2d with zero fill: SciPy's (and jax's) orientation in every mode,
    including which operand slides when in2 is the larger one."""
    _two_dimensional("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = mnp.asarray(in1), mnp.asarray(in2)
    second_larger = all(a <= b for a, b in zip(in1.shape, in2.shape, strict=True))
    same_shape = in1.shape == in2.shape
    slide_first = second_larger and (mode == "full" or (mode == "valid" and not same_shape))
    if slide_first:  # correlate in2 against the reversed in1 (conjugated back in "full" mode)
        result = _convolve_nd(mnp.flip(in2), in1.conj(), mode, precision)
        return result.conj() if mode == "full" else result
    return mnp.flip(_convolve_nd(mnp.flip(in1), in2.conj(), mode, precision))
