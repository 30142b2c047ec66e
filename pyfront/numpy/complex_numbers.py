"""mlax.numpy's complex-number functions: real, imag, conjugate, angle, iscomplex, isreal,
sort_complex.

Each follows jnp: on complex arrays they call the `lax.real/imag/conj` primitives; on real ones
real and conjugate return the value, imag returns zeros of its dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax.core import abstractify
from mlax.dialect import dtypes as ir_dtypes
from mlax.numpy import elementwise as ew
from mlax.numpy.math_extra import degrees
from mlax.numpy.util import asarray, check_arraylike, const_like, promote_args_inexact, to_inexact_dtype

__all__ = ["angle", "conj", "conjugate", "imag", "iscomplex", "isreal", "real", "sort_complex"]


def _is_complex(x: Any) -> bool:
    return ir_dtypes.is_complex(abstractify(x).dtype)


def real(val: Any, /) -> Any:
    """The real part (the value itself for real arrays)."""
    check_arraylike("real", val)
    return lax.real(val) if _is_complex(val) else asarray(val)


def imag(val: Any, /) -> Any:
    """The imaginary part (zeros of ``val``'s dtype for real arrays)."""
    check_arraylike("imag", val)
    return lax.imag(val) if _is_complex(val) else const_like(val, 0, "like")


def conjugate(x: Any, /) -> Any:
    """The complex conjugate (the value itself for real arrays)."""
    check_arraylike("conjugate", x)
    return lax.conj(x) if _is_complex(x) else asarray(x)


conj = conjugate


def angle(z: Any, deg: bool = False) -> Any:
    """The argument atan2(imag, real), in radians unless ``deg``; real inputs become inexact."""
    check_arraylike("angle", z)
    re, im = promote_args_inexact("angle", real(z), imag(z))
    result = ew.arctan2(im, re)
    return degrees(result) if deg else result


def isreal(x: Any, /) -> Any:
    """True where the imaginary part is zero (everywhere for real arrays)."""
    i = imag(x)
    return lax.eq(i, const_like(i, 0))


def iscomplex(x: Any, /) -> Any:
    """True where the imaginary part is nonzero (nowhere for real arrays)."""
    i = imag(x)
    return lax.ne(i, const_like(i, 0))


def to_complex_dtype(dtype: Any) -> np.dtype:
    """jax's complex type for a dtype: complex128 where the inexact type is 64-bit per part, else
    complex64 (so int32 gives complex64 even with x64)."""
    wide = to_inexact_dtype(dtype) in (np.dtype(np.float64), np.dtype(np.complex128))
    return np.dtype(np.complex128 if wide else np.complex64)


def sort_complex(a: Any) -> Any:
    """``a`` sorted along its last axis (complex values by real part, then imaginary part), as a
    complex array: jnp sorts in the input's dtype, then converts."""
    check_arraylike("sort_complex", a)
    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("mlax.numpy.sort_complex: axis -1 is out of bounds for array of dimension 0")
    return lax.convert_element_type(lax.sort(a), to_complex_dtype(a.dtype))
