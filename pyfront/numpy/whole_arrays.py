"""mlax.numpy's tests of whole arrays: array_equal, array_equiv and allclose, each one boolean
(a traceable scalar array) reduced from math_extra's elementwise tests (equal, isnan, isclose).
Apart from math_extra because the reductions are built on its where and isnan.
"""

from __future__ import annotations

from typing import Any

from mlax import prng
from mlax.numpy import elementwise as ew
from mlax.numpy.math_extra import isclose, isnan
from mlax.numpy.reductions import all as all_
from mlax.numpy.util import asarray, check_arraylike

__all__ = ["allclose", "array_equal", "array_equiv"]


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Whether both have one shape and equal elements (NaNs equal if ``equal_nan``)."""
    a1, a2 = asarray(a1), asarray(a2)
    if prng.is_key(a1) or prng.is_key(a2):
        if not (prng.is_key(a1) and prng.is_key(a2)) or a1.dtype != a2.dtype:
            return asarray(False)
        return array_equal(a1._base_array, a2._base_array)
    if a1.shape != a2.shape:
        return asarray(False)
    eq = ew.equal(a1, a2)
    if equal_nan:
        eq = ew.logical_or(eq, ew.logical_and(isnan(a1), isnan(a2)))
    return all_(eq)


def array_equiv(a1: Any, a2: Any) -> Any:
    """Whether both broadcast to one shape with equal elements."""
    try:
        eq = ew.equal(asarray(a1), asarray(a2))
    except ValueError:
        return asarray(False)
    return all_(eq)


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    """Whether every element is ``isclose`` (a boolean scalar array, traceable)."""
    check_arraylike("allclose", a, b)
    return all_(isclose(a, b, rtol, atol, equal_nan))
