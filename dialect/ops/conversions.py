"""Type conversions: convert (value-preserving cast) and bitcast_convert (reinterpret bits)."""

from __future__ import annotations

import numpy as np
from mlax.dialect import dtypes
from mlax.dialect.ops.common import op_type_error
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec


def _infer_convert(x: TensorSpec, *, new_dtype: np.dtype) -> TensorSpec:
    if not dtypes.is_supported(new_dtype):
        raise op_type_error("convert", f"unsupported target dtype {new_dtype}")
    return TensorSpec(x.shape, new_dtype)


def _convert(x: np.ndarray, *, new_dtype: np.dtype) -> np.ndarray:
    """StableHLO convert: floats to ints truncate toward zero and saturate; NaN becomes 0."""
    new_dtype = np.dtype(new_dtype)
    if dtypes.is_float(x.dtype) and dtypes.is_int(new_dtype):
        info = np.iinfo(new_dtype)
        wide = np.nan_to_num(np.trunc(x.astype(np.float64)), nan=0.0)
        return np.clip(wide, info.min, info.max).astype(new_dtype)
    if dtypes.is_bool(new_dtype):
        return x != 0
    return x.astype(new_dtype)


define_op(
    "convert", "(operand: T) -> (result: U)",
    attributes={"new_dtype": "type"},
    infer=_infer_convert, reference=_convert, weak_type="never",
    summary="Elementwise conversion to `new_dtype` (float->int truncates toward zero and "
            "saturates, NaN -> 0; x != 0 for bool).",
)
