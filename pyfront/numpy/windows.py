"""mlax.numpy window functions: bartlett, blackman, hamming, hanning and kaiser, as jax.numpy:
``M`` points in the default float type, jnp's formulas in its order of operations (the Python
constants are weakly typed, so the arithmetic stays in that type)."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax
from mlax.numpy import elementwise as ew
from mlax.numpy.bessel import i0
from mlax.numpy.creation import full
from mlax.source_info import where

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _points(M: int) -> tuple[Any, Any]:
    """``(ones(M), None)`` for M <= 1, else ``(None, n)`` with ``n = 0 .. M-1``."""
    M = operator.index(M)
    dtype = front_dtypes.default_float()
    if M < 0:
        raise TypeError(f"window functions: the number of points must be nonnegative, got M={M}{where()}")
    if M <= 1:
        return full((M,), 1, dtype), None
    return None, lax.iota(dtype, M)


def _cos_n(n: Any, M: int, k: int) -> Any:
    """``cos(2 pi k n / (M - 1))``."""
    return ew.cos(2 * k * np.pi * n / (M - 1))


def bartlett(M: int) -> Any:
    """``jnp.bartlett``: the triangular window ``1 - |2n + 1 - M| / (M - 1)``."""
    ones, n = _points(M)
    return ones if n is None else 1 - ew.absolute(2 * n + 1 - M) / (M - 1)


def blackman(M: int) -> Any:
    """``jnp.blackman``: ``0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))``."""
    ones, n = _points(M)
    return ones if n is None else 0.42 - 0.5 * _cos_n(n, M, 1) + 0.08 * _cos_n(n, M, 2)


def hamming(M: int) -> Any:
    """``jnp.hamming``: ``0.54 - 0.46 cos(2 pi n / (M - 1))``."""
    ones, n = _points(M)
    return ones if n is None else 0.54 - 0.46 * _cos_n(n, M, 1)


def hanning(M: int) -> Any:
    """``jnp.hanning``: the Hann window ``0.5 (1 - cos(2 pi n / (M - 1)))``."""
    ones, n = _points(M)
    return ones if n is None else 0.5 * (1 - _cos_n(n, M, 1))


def kaiser(M: int, beta: Any) -> Any:
    """``jnp.kaiser``: ``i0(beta sqrt(1 - ((n - a) / a)**2)) / i0(beta)`` with ``a = (M - 1) / 2``."""
    ones, n = _points(M)
    if n is None:
        return ones
    alpha = 0.5 * (M - 1)
    return i0(beta * ew.sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)
