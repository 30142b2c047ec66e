"""Linear algebra: dot_general, the batched tensor contraction.

Result dimensions follow StableHLO: batch dimensions (in the order of
`lhs_batch_dimensions`), then the lhs free dimensions, then the rhs free dimensions (free
dimensions keep their operand order). The reference computes by transposing each operand
to (batch, free, contracting) form and calling `np.matmul`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mlax.dialect import dtypes
from mlax.dialect.ops.common import (
    DEFAULT_PRECISION,
    check_precision,
    compute_dtype,
    op_type_error,
    op_value_error,
)
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec

NAME = "dot_general"


def _free_dims(ndim: int, contracting: tuple[int, ...], batch: tuple[int, ...]) -> list[int]:
    return [d for d in range(ndim) if d not in contracting and d not in batch]


def _check_side(side: str, spec: TensorSpec, contracting: tuple[int, ...], batch: tuple[int, ...]) -> None:
    for what, dims in (("contracting", contracting), ("batch", batch)):
        if any(not 0 <= d < spec.ndim for d in dims):
            raise op_value_error(NAME, f"{side}_{what}_dimensions {dims} out of range for {side} rank "
                                       f"{spec.ndim}")
        if len(set(dims)) != len(dims):
            raise op_value_error(NAME, f"{side}_{what}_dimensions {dims} repeat a dimension")
    if set(contracting) & set(batch):
        raise op_value_error(NAME, f"{side}_contracting_dimensions {contracting} and "
                                   f"{side}_batch_dimensions {batch} overlap")


def _check_pairs(what: str, lhs: TensorSpec, rhs: TensorSpec, lhs_dims: tuple[int, ...],
                 rhs_dims: tuple[int, ...]) -> None:
    if len(lhs_dims) != len(rhs_dims):
        raise op_value_error(NAME, f"lhs_{what}_dimensions {lhs_dims} and rhs_{what}_dimensions "
                                   f"{rhs_dims} differ in length")
    lhs_sizes = tuple(lhs.shape[d] for d in lhs_dims)
    rhs_sizes = tuple(rhs.shape[d] for d in rhs_dims)
    if lhs_sizes != rhs_sizes:
        raise op_value_error(NAME, f"{what} dimension sizes differ: lhs {lhs_sizes} (dims {lhs_dims} of "
                                   f"{lhs.shape}) vs rhs {rhs_sizes} (dims {rhs_dims} of {rhs.shape})")


def _check_result_dtype(operand: np.dtype, result: np.dtype) -> None:
    if not dtypes.is_supported(result):
        raise op_type_error(NAME, f"unsupported result_dtype {result}")
    if dtypes.is_complex(operand) != dtypes.is_complex(result):
        raise op_type_error(NAME, f"result_dtype {result} and operand dtype {operand} must both be complex "
                                  "or both real")
    if dtypes.is_float(operand) and not dtypes.is_float(result):
        raise op_type_error(NAME, f"result_dtype {result} must be floating for {operand} operands "
                                  "(convert the result instead)")
    if dtypes.is_bool(result) and not dtypes.is_bool(operand):
        raise op_type_error(NAME, f"result_dtype bool needs bool operands, got {operand}")


def _infer(lhs: TensorSpec, rhs: TensorSpec, *, lhs_contracting_dimensions: tuple[int, ...],
           rhs_contracting_dimensions: tuple[int, ...], lhs_batch_dimensions: tuple[int, ...],
           rhs_batch_dimensions: tuple[int, ...], result_dtype: Any,
           precision: tuple[str, str] = DEFAULT_PRECISION) -> TensorSpec:
    check_precision(NAME, precision)
    lc, rc = tuple(lhs_contracting_dimensions), tuple(rhs_contracting_dimensions)
    lb, rb = tuple(lhs_batch_dimensions), tuple(rhs_batch_dimensions)
    if lhs.dtype != rhs.dtype:
        raise op_type_error(NAME, f"lhs and rhs must have the same dtype, got {lhs.dtype} and {rhs.dtype}")
    _check_result_dtype(lhs.dtype, np.dtype(result_dtype))
    _check_side("lhs", lhs, lc, lb)
    _check_side("rhs", rhs, rc, rb)
    _check_pairs("batch", lhs, rhs, lb, rb)
    _check_pairs("contracting", lhs, rhs, lc, rc)
    shape = ([lhs.shape[d] for d in lb] + [lhs.shape[d] for d in _free_dims(lhs.ndim, lc, lb)]
             + [rhs.shape[d] for d in _free_dims(rhs.ndim, rc, rb)])
    return TensorSpec(tuple(shape), result_dtype)


def _as_batched_matrix(x: np.ndarray, batch: tuple[int, ...], rows: list[int] | tuple[int, ...],
                       cols: list[int] | tuple[int, ...]) -> np.ndarray:
    """``x`` transposed to (batch, rows, cols) and flattened to a stack of matrices."""
    permuted = np.transpose(x, tuple(batch) + tuple(rows) + tuple(cols))
    return permuted.reshape([math.prod(x.shape[d] for d in dims) for dims in (batch, rows, cols)])


_LONG_CONTRACTION = 4096
_WIDER = {np.dtype(np.float32): np.dtype(np.float64), np.dtype(np.complex64): np.dtype(np.complex128)}


def _accumulator_dtype(result_dtype: Any, contracted: int) -> np.dtype:
    """f32 (f64 for long contractions: NumPy's matmul of a 1 x K by a K x 1 matrix adds the K
    products in a row, 5e-3 off at K = 2^22 where jax is exact) for float results of at most
    32 bits, else the result's own dtype."""
    work = compute_dtype(result_dtype)
    return _WIDER.get(work, work) if contracted > _LONG_CONTRACTION else work


def _dot_general(lhs: np.ndarray, rhs: np.ndarray, *, lhs_contracting_dimensions: tuple[int, ...],
                 rhs_contracting_dimensions: tuple[int, ...], lhs_batch_dimensions: tuple[int, ...],
                 rhs_batch_dimensions: tuple[int, ...], result_dtype: Any,
                 precision: tuple[str, str] = DEFAULT_PRECISION) -> np.ndarray:
    del precision  # the reference is exact whatever the precision asks
    lc, rc = tuple(lhs_contracting_dimensions), tuple(rhs_contracting_dimensions)
    lb, rb = tuple(lhs_batch_dimensions), tuple(rhs_batch_dimensions)
    lfree, rfree = _free_dims(lhs.ndim, lc, lb), _free_dims(rhs.ndim, rc, rb)
    work = _accumulator_dtype(result_dtype, math.prod(lhs.shape[d] for d in lc))
    a = _as_batched_matrix(lhs.astype(work, copy=False), lb, lfree, lc)
    b = _as_batched_matrix(rhs.astype(work, copy=False), rb, rc, rfree)
    shape = [lhs.shape[d] for d in lb + tuple(lfree)] + [rhs.shape[d] for d in rfree]
    return np.matmul(a, b).reshape(shape).astype(result_dtype)


define_op(
    NAME, "(lhs: T, rhs: U) -> (result: V)",
    complex=True,
    attributes={"lhs_contracting_dimensions": "i64s", "rhs_contracting_dimensions": "i64s",
                "lhs_batch_dimensions": "i64s", "rhs_batch_dimensions": "i64s", "result_dtype": "type",
                "precision": "strs"},
    defaults={"precision": DEFAULT_PRECISION},
    infer=_infer, reference=_dot_general, weak_type="all",
    summary="Batched contraction: sum over paired contracting dimensions, per paired batch index.",
    description="""
`lhs` and `rhs` have one element type. Contracting dimensions pair up by position
(`lhs_contracting_dimensions[i]` with `rhs_contracting_dimensions[i]`, equal sizes), and so
do batch dimensions; on each side all listed dimensions are distinct and in range and no
dimension is both batch and contracting. Either list may be empty (an outer product, or no
batching). Result shape: batch sizes, then the lhs free dimensions, then the rhs free
dimensions, each group in operand order.

`result_dtype` is the element type of the result and of the accumulation: operands are
converted to it and multiplied and summed in it, so integers wrap and an int32 result of
int8 operands cannot overflow early; f16/bf16 results accumulate in f32 and round once (as
XLA's CPU backend does). Allowed: floating operands with a floating result; integer
operands with an integer or floating result; bool operands with any result (bool: or of
ands; integer: a count). Contracting over zero elements gives 0 (false).

`precision` (optional, absent means `["DEFAULT", "DEFAULT"]`) is jax's `lax.Precision` of
each operand, `DEFAULT`, `HIGH` or `HIGHEST`: how many bf16/tf32 passes XLA's TPU and GPU
backends and mlax's GPU matmul may use for f32 operands. The reference and the CPU backend
ignore it (always exact); the StableHLO lowering emits it as `precision_config`.
""",
)
