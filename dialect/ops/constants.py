"""Ops that make values from nothing: constant and iota."""

from __future__ import annotations

import numpy as np
from mlax.dialect import dtypes
from mlax.dialect.ops.common import op_type_error
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec


def _infer_constant(*, value: np.ndarray) -> TensorSpec:
    value = np.asarray(value)
    if not dtypes.is_supported(value.dtype):
        raise op_type_error("constant", f"unsupported dtype {value.dtype}")
    return TensorSpec(value.shape, value.dtype)


define_op(
    "constant", "() -> (result: T)",
    attributes={"value": "dense"},
    infer=_infer_constant,
    reference=lambda *, value: np.array(value, copy=True),
    weak_type="never",
    summary="A tensor literal; `value` is a dense elements attribute of the result type.",
)
