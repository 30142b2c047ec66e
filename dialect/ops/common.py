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


# NumPy's ufuncs and iterators take at most 32 dimensions (an ndarray may have 64).
NUMPY_ITERATOR_RANK = 32


def any_rank(reference: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """``reference`` of an elementwise op, run on operands of rank above NumPy's iterator limit
    by flattening them: operands of the widest operand's shape become 1-D, rank-0 ones stay,
    and the result takes that shape back (jax computes on arrays of any rank)."""

    def run(*xs: np.ndarray, **attrs: object) -> np.ndarray:
        shape = max((np.shape(x) for x in xs), key=len)
        if len(shape) <= NUMPY_ITERATOR_RANK:
            return reference(*xs, **attrs)
        flat = [np.reshape(x, -1) if np.shape(x) == shape else x for x in xs]
        return np.reshape(reference(*flat, **attrs), shape)

    return run


def along_rows(reference: Callable[..., np.ndarray | tuple[np.ndarray, ...]],
               dimension: str | None = "dimension") -> Callable[..., np.ndarray | tuple[np.ndarray, ...]]:
    """``reference`` of an op that works along one axis (the attribute ``dimension``, or the
    last axis when None) of operands of one outer shape, run on operands of rank above NumPy's
    iterator limit as rows: that axis moved last and the others flattened into one."""

    def run(*xs: np.ndarray, **attrs: object) -> np.ndarray | tuple[np.ndarray, ...]:
        if max(np.ndim(x) for x in xs) <= NUMPY_ITERATOR_RANK:
            return reference(*xs, **attrs)
        axis = -1 if dimension is None else int(attrs[dimension])  # type: ignore[call-overload]
        moved = [np.moveaxis(x, axis, -1) for x in xs]
        outer = moved[0].shape[:-1]
        out = reference(*(m.reshape(-1, m.shape[-1]) for m in moved),
                        **(attrs if dimension is None else {**attrs, dimension: 1}))

        def back(o: np.ndarray) -> np.ndarray:
            return np.moveaxis(o.reshape(*outer, o.shape[-1]), -1, axis)

        return tuple(back(o) for o in out) if isinstance(out, tuple) else back(out)

    return run

