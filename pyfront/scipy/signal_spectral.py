"""mlax.scipy.signal's spectral analysis: stft, istft, csd and welch, as jax.scipy.signal, and
the detrend they apply to each segment.

Every estimate moves the time axis last, cuts the signal into segments of ``nperseg`` samples
every ``nperseg - noverlap`` (one gather with an index table built on the host; its gradient is
a scatter-add), detrends and windows each segment and takes its FFT. istft undoes this with the
matching overlap-add, one scatter-add. Named windows ('hann', ('tukey', 0.3), ...) are built on
the host with scipy.signal.get_window, as jax builds them, so under jit they are constants.

jax's defaults are kept where they differ from SciPy's: welch and csd take the whole signal as
one segment when ``nperseg`` is None, and the median average of a cross spectrum takes the
medians of the real and imaginary parts. Two places follow SciPy instead, where jax's code
disagrees with its own documentation: a callable ``detrend`` is applied within each segment
(jax 0.10.2 moves the wrong axis and detrends across segments), and istft treats
``noverlap=0`` as no overlap (jax reads 0 as "the default").
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import mlax.numpy as mnp
from mlax import lax
from mlax.numpy.util import check_arraylike, normalize_axis, promote_dtypes_inexact, to_inexact_dtype

__all__ = ["csd", "detrend", "istft", "stft", "welch"]

Detrend = bool | str | Callable[[Any], Any]
_BOUNDARIES = ("even", "odd", "constant", "zeros", None)


def _complex_dtype(dtype: Any) -> np.dtype:
    """jax's ``to_complex_dtype`` for an inexact dtype: 64-bit parts stay 64-bit, else complex64."""
    return np.dtype(np.complex128 if np.dtype(dtype) in (np.float64, np.complex128) else np.complex64)


def _host_window(window: str | tuple[Any, ...], n: int) -> np.ndarray:
    """A named window of ``n`` points, periodic as spectral analysis wants (SciPy's own table)."""
    from scipy.signal import get_window

    return get_window(window, n) if n else np.zeros(0)


def _triage_window(window: Any, nperseg: int | None, input_length: int, dtype: Any) -> tuple[Any, int]:
    """The window as an array of ``dtype`` and the segment length (jax's ``_triage_segments``)."""
    if isinstance(window, (str, tuple)):
        n = input_length if nperseg is None else nperseg
        if n > input_length:
            warnings.warn(f"nperseg={n} is greater than input_length={input_length}, "
                          f"using nperseg={input_length}", stacklevel=3)
            n = input_length
        return mnp.asarray(_host_window(window, n), dtype), n
    win = mnp.asarray(window, dtype)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if input_length < win.size:
        raise ValueError("window is longer than input signal")
    if nperseg is not None and nperseg != win.size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, win.size


def _pad_time(x: Any, before: int, after: int, mode: str = "constant") -> Any:
    return mnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(before, after)], mode)


def _odd_extension(x: Any, n: int) -> Any:
    """``2 x[0] - x[n:0:-1]`` before and ``2 x[-1] - x[-2:-n-2:-1]`` after the signal (last axis);
    n = nperseg // 2 is below the signal's length, as nperseg is at most that length."""
    if n < 1:
        return x
    left = 2 * x[..., :1] - mnp.flip(x[..., 1:n + 1], -1)
    right = 2 * x[..., -1:] - mnp.flip(x[..., -n - 1:-1], -1)
    return mnp.concatenate([left, x, right], -1)


def _extend(x: Any, boundary: str | None, n: int) -> Any:
    """``n`` samples added at both ends of the last axis by the ``boundary`` rule."""
    if boundary is None:
        return x
    if boundary == "odd":
        return _odd_extension(x, n)
    return _pad_time(x, n, n, {"even": "reflect", "constant": "edge", "zeros": "constant"}[boundary])


def _detrend_func(detrend_type: Detrend, axis: int) -> Callable[[Any], Any]:
    """The per-segment detrending, on segments shaped (..., nseg, nperseg). A callable sees the
    segment samples on ``axis`` (the caller's time axis), as in SciPy."""
    if isinstance(detrend_type, str):
        return lambda d: detrend(d, axis=-1, type=detrend_type)
    if callable(detrend_type):
        if axis == -1:
            return detrend_type
        return lambda d: mnp.moveaxis(detrend_type(mnp.moveaxis(d, -1, axis)), axis, -1)
    if not detrend_type:
        return lambda d: d
    raise ValueError(f"Unsupported detrend type: {detrend_type}")


def _segment_spectra(x: Any, win: Any, detrend_func: Callable[[Any], Any], nperseg: int, step: int,
                     nfft: int, onesided: bool) -> Any:
    """FFTs (last axis) of the windowed, detrended segments: (..., nseg, nfft or nfft // 2 + 1)."""
    starts = np.arange(0, x.shape[-1] - nperseg + 1, step)
    segments = detrend_func(x[..., starts[:, None] + np.arange(nperseg)])
    return (mnp.fft.rfft if onesided else mnp.fft.fft)(win * segments, n=nfft)


def _spectral(x: Any, y: Any, fs: Any, window: Any, nperseg: int | None, noverlap: int | None,
              nfft: int | None, detrend_type: Detrend, return_onesided: bool, scaling: str, axis: int,
              stft_mode: bool = False, boundary: str | None = None,
              padded: bool = False) -> tuple[Any, Any, Any]:
    """(freqs, times, spectra): the STFT of ``x`` (``stft_mode``), the periodograms of ``x``
    (``y`` None) or the cross periodograms of ``x`` and ``y`` per segment, segments last and the
    frequencies on ``axis`` (SciPy's ``_spectral_helper``)."""
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: {list(_BOUNDARIES)}")
    user_axis = axis
    if y is None:
        check_arraylike("spectral_helper", x)
        (x,) = promote_dtypes_inexact(mnp.asarray(x))
        axis = normalize_axis("spectral_helper", axis, x.ndim)
        outer = x.shape[:axis] + x.shape[axis + 1:]
    else:
        check_arraylike("spectral_helper", x, y)
        x, y = promote_dtypes_inexact(mnp.asarray(x), mnp.asarray(y))
        if x.ndim != y.ndim:
            raise ValueError(f"two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
        axis = normalize_axis("spectral_helper", axis, x.ndim)
        try:
            outer = np.broadcast_shapes(*(v.shape[:axis] + v.shape[axis + 1:] for v in (x, y)))
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    result_dtype = _complex_dtype(x.dtype)
    freq_dtype = np.finfo(result_dtype).dtype
    if nperseg is not None:
        nperseg = int(nperseg)
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg = _triage_window(window, nperseg, x.shape[axis], x.dtype)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    nfft = nperseg if nfft is None else int(nfft)

    if x.size == 0 or (y is not None and y.size == 0):
        length = x.shape[axis] if y is None else min(x.shape[axis], y.shape[axis])
        shape = outer[:axis] + (length,) + outer[axis:]
        return mnp.zeros(shape, freq_dtype), mnp.zeros(shape, freq_dtype), mnp.zeros(shape, result_dtype)

    x = mnp.moveaxis(x, axis, -1)
    if y is not None:
        y = mnp.moveaxis(y, axis, -1)
        length = max(x.shape[-1], y.shape[-1])
        x, y = (_pad_time(v, 0, length - v.shape[-1]) for v in (x, y))
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap

    signals = [_extend(v, boundary, nperseg // 2) for v in (x, y) if v is not None]
    if padded:  # zero-pad to a whole number of segments
        extra = (-(signals[0].shape[-1] - nperseg) % step) % nperseg
        signals = [_pad_time(v, 0, extra) for v in signals]
    signal_length = signals[0].shape[-1]

    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")

    onesided = bool(return_onesided)
    if onesided and (mnp.iscomplexobj(x) or mnp.iscomplexobj(y)):
        warnings.warn("Input data is complex, switching to return_onesided=False", stacklevel=3)
        onesided = False
    freqs = (mnp.fft.rfftfreq if onesided else mnp.fft.fftfreq)(nfft, 1 / fs, dtype=freq_dtype)

    detrend_func = _detrend_func(detrend_type, user_axis)
    spectra = [_segment_spectra(v, win, detrend_func, nperseg, step, nfft, onesided) for v in signals]
    if stft_mode:
        result = (spectra[0] * mnp.sqrt(scale)).astype(result_dtype)
    elif y is None:  # |X|^2 in real arithmetic: its gradient is defined at zero too
        power = spectra[0].real ** 2 + spectra[0].imag ** 2
        result = mnp.real(power * scale).astype(freq_dtype)
    else:
        result = (spectra[0].conj() * spectra[1] * scale).astype(result_dtype)
    if onesided and not stft_mode:  # fold the negative frequencies onto the positive ones
        result = result.at[..., 1:None if nfft % 2 else -1].multiply(2)

    times = mnp.asarray(np.arange(nperseg / 2, signal_length - nperseg / 2 + 1, step, dtype=freq_dtype)) / fs
    if boundary is not None:
        times = times - (nperseg / 2) / fs
    return freqs, times, mnp.moveaxis(result, -1, axis)


def stft(x: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int = 256, noverlap: int | None = None,
         nfft: int | None = None, detrend: Detrend = False, return_onesided: bool = True,
         boundary: str | None = "zeros", padded: bool = True, axis: int = -1) -> tuple[Any, Any, Any]:
    """scipy.signal.stft: (frequencies, segment times, STFT), the spectra scaled so that a window
    of the signal's own amplitude gives that amplitude ("spectrum" scaling, square-rooted)."""
    return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, "spectrum", axis,
                     stft_mode=True, boundary=boundary, padded=padded)


def _average_segments(p: Any, average: str) -> Any:
    """The mean or the (bias-corrected) median of the periodograms on the last axis."""
    if p.ndim < 2 or p.size == 0:
        return p
    if p.shape[-1] == 1:
        return p.reshape(p.shape[:-1])
    if average == "mean":
        return p.mean(-1)
    if average != "median":
        raise ValueError(f'average must be "median" or "mean", got {average}')
    even = np.arange(2.0, p.shape[-1], 2)  # the median's bias for chi-square(2) periodograms
    bias = np.asarray(1 + np.sum(1 / (even + 1) - 1 / even), p.dtype)
    if mnp.iscomplexobj(p):
        return lax.complex(mnp.median(p.real, -1), mnp.median(p.imag, -1)) / bias
    return mnp.median(p, -1) / bias


def csd(x: Any, y: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int | None = None,
        noverlap: int | None = None, nfft: int | None = None, detrend: Detrend = "constant",
        return_onesided: bool = True, scaling: str = "density", axis: int = -1,
        average: str = "mean") -> tuple[Any, Any]:
    """scipy.signal.csd: (frequencies, cross spectral density of x and y) by Welch's method.
    ``y=None`` is the power spectral density of ``x`` (real), as jax."""
    freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling,
                              axis)
    return freqs, _average_segments(pxy, average)


def welch(x: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, detrend: Detrend = "constant",
          return_onesided: bool = True, scaling: str = "density", axis: int = -1,
          average: str = "mean") -> tuple[Any, Any]:
    """scipy.signal.welch: (frequencies, power spectral density) by averaging the periodograms of
    overlapping windowed segments."""
    freqs, pxx = csd(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis,
                     average)
    return freqs, mnp.real(pxx)


def _overlap_add(frames: Any, step: int) -> Any:
    """Frames (..., nframes, length) summed into one signal with frame i starting at ``i * step``."""
    nframes, length = frames.shape[-2:]
    positions = step * np.arange(nframes)[:, None] + np.arange(length)
    out = mnp.zeros(frames.shape[:-2] + (step * (nframes - 1) + length,), frames.dtype)
    return out.at[..., positions].add(frames)


def istft(Zxx: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int | None = None,  # noqa: N803 (SciPy's name)
          noverlap: int | None = None, nfft: int | None = None, input_onesided: bool = True,
          boundary: bool = True, time_axis: int = -1, freq_axis: int = -2) -> tuple[Any, Any]:
    """scipy.signal.istft: (times, signal) from an STFT by windowed overlap-add, normalised by the
    summed squared windows (exact where the window satisfies the NOLA condition)."""
    check_arraylike("istft", Zxx)
    Zxx = mnp.asarray(Zxx)
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = normalize_axis("istft", freq_axis, Zxx.ndim)
    time_axis = normalize_axis("istft", time_axis, Zxx.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = Zxx.astype(_complex_dtype(to_inexact_dtype(Zxx.dtype)))
    n_default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]
    nperseg = n_default if nperseg is None else int(nperseg)
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:  # an odd one-sided segment was not zero-padded
        nfft = n_default + 1 if input_onesided and nperseg == n_default + 1 else n_default
    nfft = int(nfft)
    if nfft < nperseg:
        raise ValueError(f"FFT length ({nfft}) must be longer than nperseg ({nperseg}).")
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")

    outer = [i for i in range(Zxx.ndim) if i not in (time_axis, freq_axis)]
    Zxx = mnp.transpose(Zxx, (*outer, time_axis, freq_axis))
    inverse = mnp.fft.irfft if input_onesided else mnp.fft.ifft
    frames = inverse(Zxx, n=nfft)[..., :nperseg]  # (..., nframes, nperseg)
    real_dtype = np.finfo(frames.dtype).dtype
    if isinstance(window, (str, tuple)):
        win = mnp.asarray(_host_window(window, nperseg), real_dtype)
    else:
        win = mnp.asarray(window)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg:
            raise ValueError(f"window must have length of {nperseg}")
    x = _overlap_add(frames * win.sum() * win, nperseg - noverlap)  # the sum undoes "spectrum" scaling
    norm = _overlap_add(mnp.broadcast_to(win * win, (frames.shape[-2], nperseg)), nperseg - noverlap)
    if boundary:
        half = nperseg // 2
        x, norm = x[..., half:x.shape[-1] - half], norm[half:norm.shape[-1] - half]
    x = x / mnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != Zxx.ndim - 1:
        x = mnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    times = mnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs
    return times, x


def detrend(data: Any, axis: int = -1, type: str = "linear",  # noqa: A002  (SciPy's name)
            bp: int | Sequence[int] | np.ndarray = 0, overwrite_data: None = None) -> Any:
    """scipy.signal.detrend: remove the mean ("constant") or a least-squares line per segment
    between the breakpoints ``bp`` ("linear")."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (x,) = promote_dtypes_inexact(mnp.asarray(data))
    if type == "constant":
        return x - x.mean(axis, keepdims=True)
    n = x.shape[axis]
    breaks = np.unique(np.concatenate([[0], np.atleast_1d(bp), [n]]))
    if breaks[0] < 0 or breaks[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data along given axis.")
    moved = mnp.moveaxis(x, axis, 0)
    rows = moved.reshape(n, -1)
    for start, stop in zip(breaks[:-1], breaks[1:], strict=True):
        rows = rows.at[start:stop].add(-_line_fit(rows[start:stop]))
    return mnp.moveaxis(rows.reshape(moved.shape), 0, axis)


def _line_fit(y: Any) -> Any:
    """The least-squares line through each column of ``y`` at t = 1/m, 2/m, ..., 1 (jax's design
    matrix), from the 2x2 normal equations: exact arithmetic for a two-column fit."""
    m = y.shape[0]
    if m == 1:  # one point: the minimum-norm fit passes through it
        return y
    t = mnp.arange(1, m + 1, dtype=y.dtype) / y.dtype.type(m)
    st, stt = t.sum(), (t * t).sum()
    sy, sty = y.sum(0), (t[:, None] * y).sum(0)
    det = m * stt - st * st
    slope = (m * sty - st * sy) / det
    intercept = (stt * sy - st * sty) / det
    return intercept[None, :] + t[:, None] * slope[None, :]
