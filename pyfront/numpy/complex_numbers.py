"""mlax.numpy's complex-number functions: real, imag, conjugate, angle, iscomplex, isreal.

Each follows jnp: on complex arrays they call the `lax.real/imag/conj` primitives; on real ones
real and conjugate return the value, imag returns zeros of its dtype.
"""

from __future__ import annotations

from typing import Any

from mlax import lax
from mlax.core import abstractify
from mlax.dialect import dtypes as ir_dtypes
from mlax.numpy import elementwise as ew
from mlax.numpy.math_extra import degrees
from mlax.numpy.util import asarray, check_arraylike, const_like, promote_args_inexact

__all__ = ["angle", "conj", "conjugate", "imag", "iscomplex", "isreal", "real"]


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
