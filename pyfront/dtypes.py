"""Dtype rules of the front end: JAX's promotion lattice, weak types, the 32-bit default.

The lattice itself is JAX's (jax is a declared dependency and the test oracle); this
module adapts it to mlax values and owns canonicalization under ``config.x64``.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from mlax.configuration import config
from mlax.dialect import dtypes as ir_dtypes
from mlax.jax_private import dtypes as jax_dtypes

# jax.dtypes.bfloat16 is the scalar type (``bfloat16(1)`` makes a scalar), as NumPy's float32 is
bfloat16 = ml_dtypes.bfloat16

_NARROW = {
    np.dtype(np.int64): np.dtype(np.int32),
    np.dtype(np.uint64): np.dtype(np.uint32),
    np.dtype(np.float64): np.dtype(np.float32),
    np.dtype(np.complex128): np.dtype(np.complex64),
}
PYTHON_SCALARS = (bool, int, float, complex)


def is_python_scalar(x: Any) -> bool:
    """A Python bool/int/float/complex, weakly typed in JAX. NumPy scalars are not, even
    though ``np.float64`` subclasses ``float``: JAX checks the exact type, and so do we."""
    return type(x) in PYTHON_SCALARS


def canonicalize(dtype: Any) -> np.dtype:
    """The dtype mlax uses for ``dtype``: 64-bit types narrow to 32 bits unless x64 is on."""
    dt = np.dtype(dtype)
    if not config.x64_enabled:
        dt = _NARROW.get(dt, dt)
    if not ir_dtypes.is_supported(dt):
        raise TypeError(unsupported_message(dt))
    return dt


# ml_dtypes' narrow types, which jax computes with and mlax does not (yet).
_NARROW_TYPES = ("float8_", "float6_", "float4_", "int4", "uint4", "int2", "uint2", "int1", "uint1")


def unsupported_message(dtype: np.dtype) -> str:
    """Why mlax refuses ``dtype``: "mlax does not support dtype ...", and what it computes with."""
    message = f"mlax does not support dtype {dtype}"
    if dtype.name.startswith(_NARROW_TYPES):
        message += (" (8-, 6- and 4-bit floats and 1-, 2- and 4-bit integers are not supported yet; mlax "
                    "computes with bool, (u)int8-64, float16, bfloat16, float32, float64, complex64 and "
                    "complex128)")
    return message


def supported(dtype: Any) -> bool:
    """Whether mlax computes with ``dtype`` (after the 32-bit narrowing)."""
    try:
        canonicalize(dtype)
    except TypeError:
        return False
    return True


def default_float() -> np.dtype:
    return canonicalize(np.float64)


def default_complex() -> np.dtype:
    return canonicalize(np.complex128)


def default_int() -> np.dtype:
    return canonicalize(np.int64)


def python_scalar_dtype(value: Any) -> np.dtype:
    """The (weak) dtype JAX gives a Python scalar."""
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    if isinstance(value, int):
        return default_int()
    if isinstance(value, float):
        return default_float()
    if isinstance(value, complex):
        return canonicalize(np.complex128)
    raise TypeError(f"mlax does not support Python values of type {type(value).__name__}")


class _Typed:
    """What JAX's lattice needs to see of a value: a dtype and whether it is weak."""

    __slots__ = ("dtype", "aval", "weak_type")

    def __init__(self, dtype: np.dtype, weak: bool) -> None:
        self.dtype = np.dtype(dtype)
        self.aval = self
        self.weak_type = weak


def dtype_and_weak(x: Any) -> tuple[np.dtype, bool]:
    """(dtype, weak_type) of an mlax value, NumPy value, Python scalar or dtype-like."""
    if is_python_scalar(x):
        return python_scalar_dtype(x), not isinstance(x, bool)
    aval = getattr(x, "aval", None)
    if aval is not None and hasattr(aval, "weak_type"):
        return np.dtype(aval.dtype), bool(aval.weak_type)
    if any(x is t for t in PYTHON_SCALARS):
        return python_scalar_dtype(x(0)), x is not bool
    if not isinstance(x, type) and hasattr(type(x), "__jax_array__"):  # flax.nnx's Variables
        return dtype_and_weak(x.__jax_array__())
    if isinstance(x, type) or not hasattr(x, "dtype"):  # np.float32, "int8", np.dtype(...)
        return canonicalize(np.dtype(x)), False
    return canonicalize(x.dtype), False


def _key_dtype(x: Any) -> Any:
    """The extended dtype (a PRNG key's) of an array of one, else None."""
    dtype = None if isinstance(x, (type, np.dtype, str)) else getattr(x, "dtype", None)
    return dtype if isinstance(dtype, jax_dtypes.ExtendedDType) else None


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """JAX's ``result_type``: promotion of arrays, dtypes and weakly typed Python scalars; arrays
    of one extended dtype (keys) keep it, which promotes with nothing else."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    keys = [_key_dtype(a) for a in args]
    if any(k is not None for k in keys):
        for k in keys:
            if k != keys[0]:
                raise ValueError(f"dtype={k if k is not None else keys[0]} is not a valid dtype for JAX type "
                                 "promotion.")
        return (keys[0], False) if return_weak_type_flag else keys[0]
    typed = [_Typed(*dtype_and_weak(a)) for a in args]
    dtype, weak = jax_dtypes.lattice_result_type(*typed)
    dtype = canonicalize(dtype)
    return (dtype, weak) if return_weak_type_flag else dtype


def promote_types(a: Any, b: Any) -> np.dtype:
    return canonicalize(jax_dtypes.promote_types(np.dtype(a), np.dtype(b)))


# Dtype queries with nothing to trace are jax's own: they read the same x64 switch as mlax.
TypePromotionError = jax_dtypes.TypePromotionError
canonicalize_dtype = jax_dtypes.canonicalize_dtype
finfo = jax_dtypes.finfo
iinfo = jax_dtypes.iinfo
float0 = jax_dtypes.float0
itemsize_bits = jax_dtypes.itemsize_bits
scalar_type_of = jax_dtypes.scalar_type_of

# JAX's abstract classes of extended dtypes: ``issubdtype(key.dtype, prng_key)`` holds for the key
# arrays of mlax.random.key, whose dtype is JAX's own key dtype.
extended = jax_dtypes.extended
prng_key = jax_dtypes.prng_key


def issubdtype(a: Any, b: Any) -> bool:
    """JAX's issubdtype: NumPy's, plus bfloat16 as floating and key dtypes under ``prng_key``."""
    return jax_dtypes.issubdtype(a, b)
