"""Ops that make values from nothing: constant and iota."""

from __future__ import annotations

import numpy as np

from mlax.dialect import dtypes
from mlax.dialect.ops.common import op_type_error, op_value_error
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec


def _infer_constant(*, value: np.ndarray) -> TensorSpec:
    value = np.asarray(value)
    if not dtypes.is_supported(value.dtype):
        raise op_type_error("constant", f"unsupported dtype {value.dtype}")
    return TensorSpec(value.shape, value.dtype)


define_op(
    "constant", "() -> (result: T)",
    zero_derivative=True, complex=True,
    attributes={"value": "dense"},
    infer=_infer_constant,
    reference=lambda *, value: np.array(value, copy=True),
    weak_type="never",
    summary="A tensor literal; `value` is a dense elements attribute of the result type.",
)


def _infer_iota(*, shape: tuple[int, ...], dtype: np.dtype, dimension: int) -> TensorSpec:
    if not dtypes.is_supported(dtype) or dtypes.is_bool(dtype):
        raise op_type_error("iota", f"dtype must be an integer or floating-point or complex type, got "
                                    f"{np.dtype(dtype)}")
    if any(d < 0 for d in shape):
        raise op_value_error("iota", f"shape {tuple(shape)} must be nonnegative")
    if not 0 <= dimension < len(shape):
        raise op_value_error("iota", f"dimension {dimension} out of range for shape {tuple(shape)}")
    return TensorSpec(shape, dtype)


def _iota(*, shape: tuple[int, ...], dtype: np.dtype, dimension: int) -> np.ndarray:
    """Count in int64 and cast, so narrow integer types wrap as XLA's iota does."""
    counts = np.arange(shape[dimension], dtype=np.int64).astype(dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(counts.reshape(expanded), shape).copy()


define_op(
    "iota", "() -> (result: T)",
    zero_derivative=True, complex=True,
    attributes={"shape": "i64s", "dtype": "type", "dimension": "i64"},
    infer=_infer_iota, reference=_iota, weak_type="never",
    summary="Counting values 0, 1, 2, ... along `dimension`, broadcast over the other dimensions.",
    description="""
No operands. The result has shape `shape` and element type `dtype` (integer, float or
complex, not i1); `result[i_0, ..., i_{n-1}] = i_dimension` converted to `dtype` (integers
wrap modulo 2^bits, floats round to nearest, complex values have imaginary part 0).
`dimension` is in `0 .. rank-1`, so the shape has rank at least 1. This is
`lax.broadcasted_iota`; `lax.iota(dtype, n)` is the rank-1 case.
""",
)
