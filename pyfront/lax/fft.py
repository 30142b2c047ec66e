"""mlax.lax.fft: jax's `lax.fft(x, fft_type, fft_lengths)` on the dialect's fft op
(dialect/ops/fft.py), with jax's `FftType` (the enum itself, so values compare equal to jax's).

As jax's wrapper: the kind may be given by name ("fft", "IRFFT", ...); RFFT refuses complex
operands and makes others inexact, the other kinds make the operand complex (jax's promotion:
integers and f16 become complex64, f64 complex128); no lengths returns the converted operand.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from jax.lax import FftType

from mlax import dtypes as front_dtypes
from mlax.core import abstractify, bind
from mlax.lax.common import operand as as_operand
from mlax.lax.elementwise import convert_element_type

__all__ = ["FftType", "fft"]

_BY_NAME = {"fft": FftType.FFT, "ifft": FftType.IFFT, "rfft": FftType.RFFT, "irfft": FftType.IRFFT}


def fft_type_of(fft_type: FftType | str) -> FftType:
    """jax's `_str_to_fft_type` (lower or upper case names), and its errors."""
    if isinstance(fft_type, str):
        kind = _BY_NAME.get(fft_type.lower())
        if kind is None or fft_type not in (kind.name, kind.name.lower()):
            raise ValueError(f"Unknown FFT type '{fft_type}'")
        return kind
    if isinstance(fft_type, FftType):
        return fft_type
    raise TypeError(f"Unknown FFT type value '{fft_type}'")


def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """The discrete Fourier transform ``fft_type`` over the last ``len(fft_lengths)`` axes of
    ``x`` (1 to 3), as jax.lax.fft."""
    kind = fft_type_of(fft_type)
    x = as_operand(x)
    dtype = abstractify(x).dtype
    if kind == FftType.RFFT and np.issubdtype(dtype, np.complexfloating):
        raise ValueError("only real valued inputs supported for rfft")
    inexact = dtype if front_dtypes.issubdtype(dtype, np.inexact) else front_dtypes.promote_types(
        dtype, front_dtypes.default_float())
    if kind != FftType.RFFT and not np.issubdtype(inexact, np.complexfloating):  # jax's to_complex_dtype
        inexact = np.dtype(np.complex128 if inexact == np.float64 else np.complex64)
    x = convert_element_type(x, inexact)
    lengths = tuple(int(n) for n in fft_lengths)
    if not lengths:
        return x
    return bind("fft", x, fft_type=kind.name, fft_lengths=lengths)
