"""Element types of the mlax dialect: NumPy dtypes <-> MLIR builtin element types.

The front end, the interpreter and the builders speak NumPy dtypes; the IR speaks MLIR
types. This module is the one place where the two names meet.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from mlir import ir

bfloat16 = np.dtype(ml_dtypes.bfloat16)

# NumPy dtype -> MLIR element type spelling.
_TO_MLIR: dict[np.dtype, str] = {
    np.dtype(np.bool_): "i1",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "ui8",
    np.dtype(np.uint16): "ui16",
    np.dtype(np.uint32): "ui32",
    np.dtype(np.uint64): "ui64",
    np.dtype(np.float16): "f16",
    bfloat16: "bf16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "complex<f32>",
    np.dtype(np.complex128): "complex<f64>",
}
_FROM_MLIR: dict[str, np.dtype] = {name: dt for dt, name in _TO_MLIR.items()}

SUPPORTED_DTYPES: tuple[np.dtype, ...] = tuple(_TO_MLIR)


def is_supported(dtype: np.dtype) -> bool:
    return np.dtype(dtype) in _TO_MLIR


def mlir_name(dtype: np.dtype) -> str:
    """The MLIR spelling of a dtype (``float32`` -> ``f32``)."""
    try:
        return _TO_MLIR[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"mlax does not support dtype {np.dtype(dtype)}") from None


def to_mlir(dtype: np.dtype) -> ir.Type:
    """The MLIR element type of a dtype, in the current context."""
    return ir.Type.parse(mlir_name(dtype))


def from_mlir(element_type: ir.Type | str) -> np.dtype:
    name = str(element_type)
    try:
        return _FROM_MLIR[name]
    except KeyError:
        raise TypeError(f"mlax does not support element type {name}") from None


def is_float(dtype: np.dtype) -> bool:
    return np.dtype(dtype).kind == "f" or np.dtype(dtype) == bfloat16


def is_complex(dtype: np.dtype) -> bool:
    return np.dtype(dtype).kind == "c"


def is_inexact(dtype: np.dtype) -> bool:
    """Float or complex: the types differentiation gives tangents to."""
    return is_float(dtype) or is_complex(dtype)


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype of the real and imaginary parts of a complex dtype (a real dtype is its own)."""
    dtype = np.dtype(dtype)
    return np.dtype(f"f{dtype.itemsize // 2}") if is_complex(dtype) else dtype


def complex_dtype(dtype: np.dtype) -> np.dtype:
    """The complex dtype whose parts have the float dtype ``dtype`` (f32 -> complex64)."""
    return np.dtype(np.complex128) if np.dtype(dtype) == np.float64 else np.dtype(np.complex64)


def is_int(dtype: np.dtype) -> bool:
    return np.dtype(dtype).kind in "iu"


def is_signed_int(dtype: np.dtype) -> bool:
    return np.dtype(dtype).kind == "i"


def is_unsigned_int(dtype: np.dtype) -> bool:
    return np.dtype(dtype).kind == "u"


def is_bool(dtype: np.dtype) -> bool:
    return np.dtype(dtype) == np.bool_
