"""The matrices of jax.scipy.linalg given by their size alone: Hilbert, Pascal (and their
closed-form inverses), Helmert, Hadamard and the (complex) DFT matrix. ``n`` is a Python int,
as jax's static argument.

Pascal entries are binomials through lgamma as in jax (not exact factorials), so the values
match jax's to the ulp, rounding included.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax
from mlax import numpy as mnp
from mlax.scipy.special import comb

__all__ = ["dft", "hadamard", "helmert", "hilbert", "invhilbert", "invpascal", "pascal"]

_KINDS = ["symmetric", "lower", "upper"]


def _float_grid(n: int, dtype: Any) -> tuple[Any, Any]:
    a = mnp.arange(n, dtype=dtype)
    return a[:, None], a[None, :]


def _binom(n: Any, k: Any) -> Any:
    return lax.exp(lax.lgamma(n + 1.0) - lax.lgamma(n - k + 1.0) - lax.lgamma(k + 1.0))


def _kind(kind: str | None, wording: str) -> str:
    kind = "symmetric" if kind is None else kind
    if kind not in _KINDS:
        raise ValueError(f"Expected kind to be {wording}: {_KINDS}; got {kind}")
    return kind


def _of_kind(kind: str, lower: Any, symmetric: Any) -> Any:
    if kind == "lower":
        return lower
    return lower.T if kind == "upper" else symmetric()


def hilbert(n: int) -> Any:
    """The Hilbert matrix ``1 / (i + j + 1)`` of order ``n``."""
    a = lax.broadcasted_iota(front_dtypes.default_float(), (n, 1), 0)
    return 1 / (a + a.T + 1)


def invhilbert(n: int) -> Any:
    """The inverse of the Hilbert matrix of order ``n``, by its closed form in binomials."""
    i, j = _float_grid(n, front_dtypes.default_float())
    s = i + j
    return (-1.0) ** s * (s + 1.0) * comb(n + i, n - j - 1) * comb(n + j, n - i - 1) * comb(s, i) ** 2


def pascal(n: int, kind: str | None = None) -> Any:
    """The Pascal matrix of order ``n``: binomials, lower or upper triangular, or their
    symmetric product (the default). float32, as jax's."""
    kind = _kind(kind, "on of")  # sic: jax's wording
    i, j = _float_grid(n, np.float32)
    lower = _binom(i, j)
    return _of_kind(kind, lower, lambda: mnp.dot(lower, lower.T))


def invpascal(n: int, kind: str | None = None) -> Any:
    """The inverse of the Pascal matrix of order ``n``: ``(-1)**(i-j) binom(i, j)`` lower,
    its transpose upper, ``U^-1 L^-1`` symmetric."""
    kind = _kind(kind, "one of")
    i, j = _float_grid(n, front_dtypes.default_float())
    lower = ((-1.0) ** (i - j)) * _binom(i, j)
    return _of_kind(kind, lower, lambda: mnp.dot(lower.T, lower))


def helmert(n: int, full: bool = False) -> Any:
    """The Helmert matrix: ``n - 1`` orthonormal contrast rows (and with ``full``, a first row
    ``1 / sqrt(n)``)."""
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i, j = mnp.arange(n - 1)[:, None], mnp.arange(n)[None, :]
    k = i + 1
    k_f = k.astype(front_dtypes.default_float())
    denom = mnp.sqrt(k_f * (k_f + 1))
    out = mnp.where(j <= i, 1.0 / denom, mnp.where(j == k, -k_f / denom, mnp.zeros_like(denom)))
    if full:
        first_row = mnp.full((1, n), 1.0 / mnp.sqrt(n), dtype=out.dtype)
        out = mnp.concatenate([first_row, out], axis=0)
    return out


def hadamard(n: int, dtype: Any = int) -> Any:
    """The Sylvester-construction Hadamard matrix of order ``n`` (a power of 2)."""
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    out = mnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        out = mnp.block([[out, out], [out, -out]])
    return out


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Any:
    """The n-by-n discrete Fourier transform matrix ``exp(-2 pi i j k / n)``, unscaled or scaled
    by ``1 / sqrt(n)`` (``'sqrtn'``: unitary) or ``1 / n`` (``'n'``); complex64 by default
    (complex128 with x64)."""
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = front_dtypes.default_complex()
    else:
        dtype = front_dtypes.canonicalize(np.dtype(dtype))
        if not np.issubdtype(dtype, np.complexfloating):
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    a = mnp.arange(n, dtype=np.finfo(dtype).dtype).astype(dtype)  # iota is real-only: count, then convert
    omegas = mnp.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        return omegas / mnp.sqrt(n)
    return omegas / n if scale == "n" else omegas
