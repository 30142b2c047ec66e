"""The Faddeeva function of mlax.scipy.special (as jax.scipy.special.wofz):
w(z) = exp(-z^2) erfc(-iz), for real or complex z, with a complex result.

As jax, by Weideman's rational approximation (J. A. C. Weideman, "Computation of the complex
error function", SIAM J. Numer. Anal. 31 (1994)) with N = 32 terms: in the upper half plane
w(z) = 2 p(Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz)), where Z = (L + iz) / (L - iz) maps the
half plane onto the unit disc and p is a polynomial whose coefficients are the Fourier
coefficients of exp(-t^2) (L^2 + t^2) on t = L tan(theta / 2). The lower half plane follows
from w(-z) = 2 exp(-z^2) - w(z). The coefficients are computed here, once, by Weideman's FFT
recipe (they agree with jax's table to 1e-15). Derivative: w'(z) = -2 z w(z) + 2i / sqrt(pi).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.custom_derivatives import custom_jvp
from mlax.numpy.complex_numbers import to_complex_dtype
from mlax.numpy.util import promote_args_inexact

__all__ = ["wofz"]

_TERMS = 32
_L = math.sqrt(_TERMS / math.sqrt(2))  # Weideman's optimal scale for N terms


def _weideman_coefficients(terms: int, scale: float) -> np.ndarray:
    """p's coefficients, highest degree first: the discrete Fourier coefficients of
    exp(-t^2) (L^2 + t^2) sampled at t = L tan(theta / 2), theta = k pi / M for |k| < M = 2N."""
    m = 2 * terms
    theta = np.arange(-m + 1, m) * np.pi / m
    t = scale * np.tan(theta / 2)
    samples = np.concatenate([[0.0], np.exp(-t * t) * (scale * scale + t * t)])
    spectrum = np.real(np.fft.fftshift(np.fft.fft(np.fft.fftshift(samples)))) / (2 * m)
    return spectrum[m + 1:m + terms + 1][::-1].copy()


_COEFFICIENTS = _weideman_coefficients(_TERMS, _L)


def _upper(z: Any) -> Any:
    """w(z) for Im z >= 0 by the rational approximation."""
    dtype = z.dtype
    iz = lax.complex(lax.neg(lax.imag(z)), lax.real(z))
    scale = np.array(_L, dtype)
    denominator = scale - iz
    disc = (scale + iz) / denominator
    poly = mnp.zeros_like(disc)
    for c in _COEFFICIENTS:
        poly = poly * disc + np.array(c, dtype)
    return np.array(2, dtype) * poly / (denominator * denominator) + \
        np.array(1 / math.sqrt(math.pi), dtype) / denominator


@custom_jvp
def _wofz(z: Any) -> Any:
    upper = lax.imag(z) >= 0
    reflected = _upper(mnp.where(upper, z, -z))
    return mnp.where(upper, reflected, np.array(2, z.dtype) * lax.exp(-(z * z)) - reflected)


@_wofz.defjvp
def _wofz_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (z,), (t,) = primals, tangents
    w = _wofz(z)
    return w, t * (np.array(-2, z.dtype) * z * w + np.array(2j / math.sqrt(math.pi), z.dtype))


def wofz(z: Any) -> Any:
    """The Faddeeva function ``exp(-z^2) erfc(-iz)``; real arguments become complex."""
    (z,) = promote_args_inexact("wofz", z)
    return _wofz(lax.convert_element_type(z, to_complex_dtype(z.dtype)))
