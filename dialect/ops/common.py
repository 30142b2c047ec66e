"""Helpers shared by the op families: error messages and common inference shapes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from mlax.dialect import dtypes
from mlax.dialect.tensor_spec import TensorSpec


def op_type_error(op: str, message: str) -> TypeError:
    return TypeError(f"mlax.{op}: {message}")


def op_value_error(op: str, message: str) -> ValueError:
    return ValueError(f"mlax.{op}: {message}")


def require_dtype(op: str, spec: TensorSpec, predicate: Callable[[np.dtype], bool], what: str,
                  operand: str = "operand") -> None:
    if not predicate(spec.dtype):
        raise op_type_error(op, f"{operand} must have {what} element type, got {spec.dtype}")


def require_same_types(op: str, specs: Sequence[TensorSpec], names: Sequence[str]) -> None:
    """Elementwise ops take operands of one shape and one dtype (broadcasting is the front end's job)."""
    first = specs[0]
    for spec, name in zip(specs[1:], names[1:], strict=True):
        if spec.shape != first.shape:
            raise op_type_error(
                op, f"{names[0]} and {name} must have the same shape, got {first.shape} and {spec.shape}"
            )
        if spec.dtype != first.dtype:
            raise op_type_error(
                op, f"{names[0]} and {name} must have the same dtype, got {first.dtype} and {spec.dtype}"
            )


def normalize_axes(op: str, axes: Sequence[int], ndim: int, what: str = "dimensions") -> tuple[int, ...]:
    """Check that ``axes`` are distinct, in-range dimensions (no negatives at the IR level)."""
    axes = tuple(int(a) for a in axes)
    for a in axes:
        if not 0 <= a < ndim:
            raise op_value_error(op, f"{what} {axes} out of range for rank {ndim}")
    if len(set(axes)) != len(axes):
        raise op_value_error(op, f"{what} {axes} repeat a dimension")
    return axes


def is_numeric(dtype: np.dtype) -> bool:
    return not dtypes.is_bool(dtype)


def is_int_or_bool(dtype: np.dtype) -> bool:
    return dtypes.is_int(dtype) or dtypes.is_bool(dtype)


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype a reference computation runs in: half floats compute in f32, as XLA's CPU does."""
    if dtype in (np.dtype(np.float16), dtypes.bfloat16):
        return np.dtype(np.float32)
    return np.dtype(dtype)


# jax's lax.Precision per operand (lhs, rhs) of a contraction (dot_general, convolution), by name.
# It asks XLA's TPU/GPU backends for more or fewer bf16/tf32 passes on f32 operands; the reference
# and the CPU backend always compute exactly, so it only travels to the StableHLO and GPU lowerings.
PRECISIONS = ("DEFAULT", "HIGH", "HIGHEST")
DEFAULT_PRECISION = ("DEFAULT", "DEFAULT")


def check_precision(op: str, precision: Sequence[str]) -> None:
    """Refuse a precision that is not a pair of PRECISIONS names."""
    if len(precision) != 2 or any(p not in PRECISIONS for p in precision):
        raise op_value_error(op, f"precision must be a pair (lhs, rhs) of {', '.join(PRECISIONS)}, "
                                 f"got {tuple(precision)}")
