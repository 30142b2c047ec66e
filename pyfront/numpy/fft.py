"""mlax.numpy.fft: jax.numpy.fft's functions on `mlax.lax.fft` (the dialect's fft op).

Ported from jax's jax/_src/numpy/fft.py, so shapes, dtypes, errors and normalizations are
jax's: the transformed axes are moved last (`axes`), cut or zero-padded to `s` (`n`), the
transform runs over at most 3 axes at a time (more are done 3 or 2 at a time, as jax), and
`norm` ("backward", the default; "ortho"; "forward") scales the result.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import mlax.numpy as jnp  # the package: this module is its fft; jnp is used only when called
from mlax import dtypes as front_dtypes
from mlax.lax.fft import FftType
from mlax.lax.fft import fft as lax_fft
from mlax.numpy.util import check_arraylike, to_inexact_dtype

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn",
           "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

Shape = Sequence[int]


def _norm_factor(sizes: Shape, func_name: str, norm: str, dtype: np.dtype) -> Any:
    """The factor ``norm`` multiplies the result by (jax's `_fft_norm`), computed in the result's
    precision as jax computes it; None for "backward"."""
    if norm == "backward":
        return None
    real = np.dtype(dtype).type(0).real.dtype.type
    total = real(np.prod(np.asarray(sizes, dtype=real)))
    inverse = func_name.startswith("i")
    if norm == "ortho":
        root = np.sqrt(total)
        return root if inverse else real(1) / root
    if norm == "forward":
        return total if inverse else real(1) / total
    raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _fft_core(func_name: str, kind: FftType, a: Any, s: Shape | None, axes: Sequence[int] | None,
              norm: str | None) -> Any:
    full_name = f"jax.numpy.fft.{func_name}"
    check_arraylike(f"fft.{func_name}", a)
    arr = jnp.asarray(a)
    if s is not None:
        s = tuple(map(operator.index, s))
        if any(n <= 0 for n in s):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    original_axes = axes
    if axes is None:
        axes = range(arr.ndim) if s is None else range(arr.ndim - len(s), arr.ndim)
    axes = tuple(axes)
    if len({ax % arr.ndim if arr.ndim else ax for ax in axes}) != len(axes):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    if original_axes is not None:
        last = tuple(range(arr.ndim - len(axes), arr.ndim))
        arr = jnp.moveaxis(arr, axes, last)
        axes = last
    if s is not None:
        sizes = list(arr.shape)
        for axis, n in zip(axes, s, strict=True):
            sizes[axis] = n
        if kind == FftType.IRFFT:
            sizes[-1] = sizes[-1] // 2 + 1
        arr = arr[tuple(slice(n) for n in sizes)]
        arr = jnp.pad(arr, [(0, n - m) for n, m in zip(sizes, arr.shape, strict=True)])
    elif kind == FftType.IRFFT:
        s = [arr.shape[axis] for axis in axes[:-1]]
        s += [max(0, 2 * (arr.shape[axes[-1]] - 1))] if axes else []
    else:
        s = [arr.shape[axis] for axis in axes]
    out = _fft_nd(arr, kind, tuple(s))
    if norm is not None:
        factor = _norm_factor(s, func_name, norm, out.dtype)
        if factor is not None:
            out = out * factor
    if original_axes is not None:
        out = jnp.moveaxis(out, axes, original_axes)
    return out


def _fft_nd(arr: Any, kind: FftType, s: tuple[int, ...]) -> Any:
    """lax.fft over the last ``len(s)`` axes; beyond 3, the last 3 (or 2) then the others, as jax."""
    if len(s) <= 3:
        return lax_fft(arr, kind, s)
    n = 2 if len(s) == 4 else 3
    src = tuple(range(arr.ndim - len(s), arr.ndim - n))
    dst = tuple(range(arr.ndim - len(s) + n, arr.ndim))
    if kind in (FftType.RFFT, FftType.FFT):
        arr = jnp.moveaxis(lax_fft(arr, kind, s[-n:]), src, dst)
        return jnp.moveaxis(_fft_nd(arr, FftType.FFT, s[:-n]), dst, src)
    arr = jnp.moveaxis(_fft_nd(jnp.moveaxis(arr, src, dst), FftType.IFFT, s[:-n]), dst, src)
    return lax_fft(arr, kind, s[-n:])


def fftn(a: Any, s: Shape | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The n-dimensional DFT over ``axes`` (all by default), sized ``s``."""
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a: Any, s: Shape | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The n-dimensional inverse DFT over ``axes``, sized ``s``."""
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a: Any, s: Shape | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The n-dimensional DFT of a real array (the last axis keeps s[-1] // 2 + 1 frequencies)."""
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a: Any, s: Shape | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The inverse of rfftn: a real array sized ``s`` (the last axis 2 (m - 1) by default)."""
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def _check_one_axis(func_name: str, axis: Any) -> None:
    if isinstance(axis, (list, tuple)):
        full_name = f"jax.numpy.fft.{func_name}"
        raise ValueError(f"{full_name} does not support multiple axes. Please use {full_name}n. "
                         f"Got axis = {axis!r}.")


def _fft_1d(func_name: str, kind: FftType, a: Any, n: int | None, axis: int, norm: str | None) -> Any:
    _check_one_axis(func_name, axis)
    return _fft_core(func_name, kind, a, None if n is None else [n], None if axis is None else [axis], norm)


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The one-dimensional DFT along ``axis``, cut or zero-padded to ``n``."""
    return _fft_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The one-dimensional inverse DFT along ``axis``."""
    return _fft_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The one-dimensional DFT of a real array: n // 2 + 1 frequencies."""
    return _fft_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of rfft: ``n`` (default 2 (m - 1)) real values."""
    return _fft_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The DFT of a signal with Hermitian symmetry (given by its first half): a real spectrum."""
    conj_a = jnp.conj(a)
    _check_one_axis("hfft", axis)
    size = (conj_a.shape[axis] - 1) * 2 if n is None else n
    return _fft_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm) * size


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of hfft: the first half of a Hermitian signal."""
    _check_one_axis("ihfft", axis)
    arr = jnp.asarray(a)
    size = arr.shape[axis] if n is None else n
    return jnp.conj(_fft_1d("ihfft", FftType.RFFT, arr, n, axis, norm)) * (1 / size)


def _two_axes(func_name: str, kind: FftType, a: Any, s: Shape | None, axes: Sequence[int],
              norm: str | None) -> Any:
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. Got axes = {axes!r}.")
    return _fft_core(func_name, kind, a, s, axes, norm)


def fft2(a: Any, s: Shape | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Any:
    """The two-dimensional DFT over ``axes``."""
    return _two_axes("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a: Any, s: Shape | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Any:
    """The two-dimensional inverse DFT over ``axes``."""
    return _two_axes("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a: Any, s: Shape | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Any:
    """The two-dimensional DFT of a real array."""
    return _two_axes("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a: Any, s: Shape | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Any:
    """The inverse of rfft2."""
    return _two_axes("irfft2", FftType.IRFFT, a, s, axes, norm)


def _check_scalar_args(func_name: str, n: Any, d: Any) -> None:
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{func_name} only takes an int. Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{func_name} only takes a single value. "
                         f"Got d = {list(d)}.")


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of an n-point DFT with sample spacing ``d``: 0, 1, ..., -1 over d n."""
    _check_scalar_args("fftfreq", n, d)
    out_dtype = dtype or front_dtypes.default_float()
    work = front_dtypes.canonicalize(np.finfo(to_inexact_dtype(out_dtype)).dtype)
    i = jnp.arange(n, dtype=work)
    k = (i + n // 2) % n - n // 2
    return (k.astype(work) / jnp.array(d * n, dtype=work)).astype(out_dtype)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The non-negative sample frequencies of an n-point real DFT: 0 .. n // 2 over d n."""
    _check_scalar_args("rfftfreq", n, d)
    dtype = dtype or front_dtypes.default_float()
    k = jnp.arange(0, n // 2 + 1, dtype=dtype)
    return k / jnp.array(d * n, dtype=dtype)


def _shifted(func_name: str, x: Any, axes: None | int | Sequence[int], sign: int) -> Any:
    check_arraylike(func_name, x)
    x = jnp.asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
        shift: int | list[int] = [sign * (n // 2) for n in x.shape]
    elif isinstance(axes, int):
        shift = sign * (x.shape[axes] // 2)
    else:
        shift = [sign * (x.shape[ax] // 2) for ax in axes]
    return jnp.roll(x, shift, axes)


def fftshift(x: Any, axes: None | int | Sequence[int] = None) -> Any:
    """The zero frequency moved to the middle of ``axes`` (all by default)."""
    return _shifted("fftshift", x, axes, 1)


def ifftshift(x: Any, axes: None | int | Sequence[int] = None) -> Any:
    """The inverse of fftshift."""
    return _shifted("ifftshift", x, axes, -1)
