"""mlax.scipy.signal's spectral estimates (welch, csd, stft, istft) against jax.scipy.signal:
random real and complex signals of several shapes, f32 and f64 (x64), every option (windows by
name, tuple and array; detrending; scalings; one- and two-sided; boundaries; padding; mean and
median averages; other axes); eagerly, under mlax.jit on the native CPU backend and on XLA; grad
and vmap against jax's; jax's errors. A callable ``detrend`` is checked against SciPy, whose
meaning mlax keeps (jax 0.10.2 applies it across segments)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.scipy.signal as jsig
import numpy as np
import pytest
import scipy.signal

import mlax
import mlax.numpy as mnp
import mlax.scipy.signal as msig
from tests.fft.helpers import same

TOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-11}

PSD_OPTIONS = [
    {},
    dict(nperseg=16),
    dict(nperseg=20, noverlap=5, nfft=32, fs=3.0),
    dict(nperseg=16, window=("tukey", 0.3), scaling="spectrum"),
    dict(nperseg=12, window="hamming", detrend="linear"),
    dict(nperseg=16, average="median"),
    dict(nperseg=15, return_onesided=False, detrend=False),
    dict(nperseg=7, noverlap=0),
]
STFT_OPTIONS = [
    dict(nperseg=16),
    dict(nperseg=20, noverlap=5, nfft=32, fs=2.0),
    dict(nperseg=16, boundary="even", window="blackman"),
    dict(nperseg=16, boundary="odd", padded=False),
    dict(nperseg=16, boundary="constant", detrend="constant"),
    dict(nperseg=15, boundary=None, return_onesided=False),
]


def _signal(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any,
            complex_: bool = False) -> np.ndarray:
    x = rng.standard_normal(shape) + np.linspace(0, 3, shape[-1])  # a trend for detrend to remove
    if complex_:
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(np.result_type(dtype, np.complex64) if complex_ else dtype)


def _same_trees(actual: Any, expected: Any) -> None:
    for a, e in zip(jax.tree.leaves(actual), jax.tree.leaves(expected), strict=True):
        same(a, e, TOL[np.finfo(np.asarray(e).dtype).dtype])


def _quiet(fn: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex input switching to two-sided, nperseg > length
        return fn()


def _check(make: Callable[[Any], Any]) -> None:
    """``make(lib)``'s outputs with mlax eagerly against jax's in one jax.jit (jax's op-by-op
    dispatch compiles every op: seconds per call)."""
    _same_trees(_quiet(lambda: make(mlax)), _quiet(jax.jit(lambda: make(jax))))


def test_welch_and_csd(rng: np.random.Generator, dtype: Any) -> None:
    x = _signal(rng, (3, 64), dtype)
    y = _signal(rng, (1, 57), dtype)  # broadcast against x's rows, zero-padded to x's length
    xc = _signal(rng, (2, 48), dtype, complex_=True)
    # Each option set on x, and on one of the other layouts in turn (XLA compiles jax's slowly).
    others = [("welch", (x.T,), dict(axis=0)), ("csd", (x, y), {}), ("csd", (x.T, y.T), dict(axis=0)),
              ("welch", (xc,), {}), ("csd", (xc, x[:2, :40]), {})]

    def estimates(lib: Any) -> Any:
        signal = lib.scipy.signal
        return [(signal.welch(x, **options), getattr(signal, name)(*args, **options, **more))
                for i, options in enumerate(PSD_OPTIONS) for name, args, more in [others[i % len(others)]]]

    _check(estimates)


def _inverse_options(options: dict[str, Any]) -> dict[str, Any]:
    """istft's arguments undoing ``stft(**options)``."""
    inverse = {k: v for k, v in options.items() if k in ("nperseg", "noverlap", "nfft", "window", "fs")}
    return dict(inverse, input_onesided=options.get("return_onesided", True),
                boundary=options.get("boundary", "zeros") is not None)


def test_stft_and_istft(rng: np.random.Generator, dtype: Any) -> None:
    signals = [_signal(rng, (70,), dtype), _signal(rng, (2, 3, 50), dtype), _signal(rng, (40,), dtype, True)]
    # istft's inputs (taken from mlax's stft, which the check compares with jax's)
    spectra = [[np.asarray(_quiet(lambda x=x, o=options: msig.stft(x, **o))[2]) for x in signals
                if not (np.iscomplexobj(x) and options.get("return_onesided", True))]  # complex: two-sided
               for options in STFT_OPTIONS]
    x = _signal(rng, (3, 40, 2), dtype)  # time on axis 1: frequencies on 1, segments last
    z = np.asarray(msig.stft(x, nperseg=10, axis=1)[2])

    def transforms(lib: Any) -> Any:
        signal = lib.scipy.signal
        return ([([signal.stft(v, **options) for v in signals], [signal.istft(w, **_inverse_options(options))
                                                                 for w in zs])
                 for options, zs in zip(STFT_OPTIONS, spectra, strict=True)],
                signal.stft(x, nperseg=10, axis=1), signal.istft(z, nperseg=10, freq_axis=1, time_axis=-1),
                signal.istft(z, nperseg=10, freq_axis=1, time_axis=0))

    _check(transforms)


def test_array_window_and_defaults(rng: np.random.Generator, dtype: Any) -> None:
    x = _signal(rng, (2, 60), dtype)
    window = np.hanning(12).astype(dtype)
    empty = np.zeros((3, 0), dtype)
    _check(lambda lib: (lib.scipy.signal.welch(x, window=window),
                        lib.scipy.signal.stft(x, window=window, nperseg=12),
                        lib.scipy.signal.stft(x),  # nperseg 256 > 60: the whole signal
                        lib.scipy.signal.welch(x.astype(np.int32)), lib.scipy.signal.csd(x, None, nperseg=8),
                        lib.scipy.signal.welch(empty), lib.scipy.signal.stft(empty)))


def test_callable_detrend_follows_scipy(rng: np.random.Generator) -> None:
    x = _signal(rng, (3, 64), np.float32)

    def demean(d: Any) -> Any:
        return d - d.mean(-1, keepdims=True)

    ours = msig.welch(x, nperseg=16, detrend=demean)
    same(ours[1], scipy.signal.welch(x, nperseg=16, detrend=demean)[1].astype(np.float32), 2e-5)
    along_0 = msig.welch(x.T, nperseg=16, axis=0, detrend=lambda d: d - d.mean(0, keepdims=True))
    expected = jax.jit(lambda: (jsig.welch(x, nperseg=16), jsig.welch(x.T, nperseg=16, axis=0)))()
    _same_trees((ours, along_0), expected)


def _all_spectra(lib: Any) -> Callable[..., Any]:
    signal = lib.scipy.signal

    def run(x: Any, y: Any) -> Any:
        f, t, z = signal.stft(x, nperseg=16, boundary="even")
        return (signal.welch(x, nperseg=16, average="median"), signal.csd(x, y, nperseg=12, detrend="linear"),
                (f, t, z), signal.istft(z, nperseg=16), signal.welch(x, nperseg=10, return_onesided=False))

    return run


@pytest.mark.parametrize("backend", ["cpu", "xla"])
def test_under_jit(rng: np.random.Generator, dtype: Any, backend: str) -> None:
    x, y = _signal(rng, (2, 64), dtype), _signal(rng, (2, 64), dtype)
    _same_trees(mlax.jit(_all_spectra(mlax), backend=backend)(x, y), jax.jit(_all_spectra(jax))(x, y))


def _losses(lib: Any) -> Callable[..., Any]:
    signal = lib.scipy.signal

    def loss(x: Any, y: Any) -> Any:
        psd = signal.welch(x, nperseg=16, detrend="linear")[1]
        cross = signal.csd(x, y, nperseg=16)[1]
        back = signal.istft(signal.stft(x, nperseg=16)[2], nperseg=16)[1]
        return psd.sum() + (cross.real * cross.imag).sum() + (back * y).sum()

    return loss


@pytest.mark.parametrize("backend", ["eager", "cpu", "xla"])
def test_grad(rng: np.random.Generator, backend: str) -> None:
    # One signal of 64 samples: the spectra stay below 100 elements. Larger complex constants in
    # the derivative print as one hex string, which dialect/attrs.py cannot read back yet.
    x, y = _signal(rng, (64,), np.float32), _signal(rng, (64,), np.float32)
    grad = mlax.grad(_losses(mlax), argnums=(0, 1))
    if backend != "eager":
        grad = mlax.jit(grad, backend=backend)
    _same_trees(grad(x, y), jax.jit(jax.grad(_losses(jax), argnums=(0, 1)))(x, y))
    fs_grad = mlax.grad(lambda fs: msig.welch(x, fs=fs, nperseg=16)[1].sum())(2.0)
    same(fs_grad, jax.jit(jax.grad(lambda fs: jsig.welch(x, fs=fs, nperseg=16)[1].sum()))(2.0), 2e-5)


def test_vmap(rng: np.random.Generator) -> None:
    x = _signal(rng, (4, 48), np.float32)

    def spectra(lib: Any) -> Callable[[Any], Any]:
        return lambda v: (lib.scipy.signal.welch(v, nperseg=12)[1], lib.scipy.signal.stft(v, nperseg=12)[2])

    _same_trees(mlax.vmap(spectra(mlax))(x), jax.jit(jax.vmap(spectra(jax)))(x))
    _same_trees(mlax.vmap(spectra(mlax), in_axes=1)(x.T), jax.jit(jax.vmap(spectra(jax), in_axes=1))(x.T))


BAD_CALLS = [
    ("welch", (np.ones(32),), dict(nperseg=8, noverlap=8)),
    ("welch", (np.ones(32),), dict(nperseg=8, nfft=4)),
    ("welch", (np.ones(32),), dict(nperseg=0)),
    ("welch", (np.ones(32),), dict(nperseg=8, scaling="power")),
    ("welch", (np.ones(32),), dict(nperseg=8, average="mode")),
    ("welch", (np.ones(32),), dict(window=np.ones((2, 4)))),
    ("welch", (np.ones(32),), dict(window=np.ones(40))),
    ("welch", (np.ones(32),), dict(window=np.ones(8), nperseg=6)),
    ("welch", (np.ones(32),), dict(detrend="quadratic")),
    ("welch", (np.ones(32),), dict(axis=1)),
    ("csd", (np.ones((2, 32)), np.ones(32)), {}),
    ("csd", (np.ones((2, 32)), np.ones((3, 32))), {}),
    ("stft", (np.ones(32),), dict(nperseg=8, boundary="wrap")),
    ("istft", (np.ones(8),), {}),
    ("istft", (np.ones((5, 4)),), dict(freq_axis=1, time_axis=-1)),
    ("istft", (np.ones((5, 4)),), dict(nperseg=8, nfft=6)),
    ("istft", (np.ones((5, 4)),), dict(noverlap=8)),
    ("istft", (np.ones((5, 4)),), dict(window=np.ones(5))),
]


@pytest.mark.parametrize("name, args, kwargs", BAD_CALLS, ids=lambda v: str(v)[:40])
def test_errors_are_jaxs(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    with pytest.raises(Exception) as expected:  # noqa: PT011 (the type is jax's, found here)
        _quiet(lambda: getattr(jsig, name)(*args, **kwargs))
    with pytest.raises(expected.type):
        _quiet(lambda: getattr(msig, name)(*args, **kwargs))


def test_warnings_and_list_input() -> None:
    with pytest.warns(UserWarning, match="switching to return_onesided=False"):
        msig.welch(np.ones(16, np.complex64), nperseg=8)
    with pytest.warns(UserWarning, match="nperseg=32 is greater than"):
        msig.welch(np.ones(16, np.float32), nperseg=32)
    assert mnp.asarray(msig.istft(np.ones((5, 4), np.complex64))[1]).dtype == np.float32
    with pytest.raises(TypeError, match="requires ndarray"):  # as jnp functions (jax 0.10.2: AttributeError)
        msig.welch([1.0, 2.0])
