"""Shape ops: broadcast_in_dim, reshape, transpose, slicing, concatenation, padding, reversal."""

from __future__ import annotations

import numpy as np
from mlax.dialect.ops.common import op_value_error
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec


def _infer_broadcast_in_dim(x: TensorSpec, *, shape: tuple[int, ...],
                            broadcast_dimensions: tuple[int, ...]) -> TensorSpec:
    name = "broadcast_in_dim"
    if len(broadcast_dimensions) != x.ndim:
        raise op_value_error(
            name, f"broadcast_dimensions {broadcast_dimensions} must have one entry per operand "
                  f"dimension (operand rank {x.ndim})")
    if any(d < 0 for d in shape):
        raise op_value_error(name, f"negative dimension in shape {shape}")
    if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise op_value_error(name, f"broadcast_dimensions {broadcast_dimensions} must be strictly increasing")
    for i, d in enumerate(broadcast_dimensions):
        if not 0 <= d < len(shape):
            raise op_value_error(name, f"broadcast dimension {d} out of range for result rank {len(shape)}")
        if x.shape[i] not in (1, shape[d]):
            raise op_value_error(
                name, f"operand dimension {i} of size {x.shape[i]} cannot broadcast to size "
                      f"{shape[d]} of result dimension {d} (shape {x.shape} -> {shape})")
    return TensorSpec(shape, x.dtype)


def _broadcast_in_dim(x: np.ndarray, *, shape: tuple[int, ...],
                      broadcast_dimensions: tuple[int, ...]) -> np.ndarray:
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape).copy()


define_op(
    "broadcast_in_dim", "(operand: T) -> (result: U)",
    attributes={"shape": "i64s", "broadcast_dimensions": "i64s"},
    infer=_infer_broadcast_in_dim, reference=_broadcast_in_dim, weak_type="first",
    summary="Broadcast: operand dimension i becomes result dimension broadcast_dimensions[i] "
            "(size 1 or equal); other result dimensions replicate.",
)
