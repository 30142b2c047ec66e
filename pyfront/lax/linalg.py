"""mlax.lax linear algebra: dot_general and its matrix shorthands dot and batch_matmul (as jax.lax).

`mlax.dot_general` takes operands of one dtype and an explicit result dtype; this wrapper
adds JAX's conveniences: mixed operand dtypes (both convert to the higher-precision one, as
XLA's shape inference picks it) and `preferred_element_type` (JAX's rules, including the
float-to-integer case, which becomes a float contraction followed by a convert).
`precision` (jax's lax.Precision, its strings or a pair; None takes
`jax_default_matmul_precision`) is recorded on the op for the StableHLO and GPU lowerings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from mlax import dtypes as front_dtypes
from mlax.core import bind
from mlax.dialect import dtypes as ir_dtypes
from mlax.lax.common import operand as as_operand
from mlax.lax.elementwise import convert_element_type
from mlax.lax.precision import canonicalize_precision

DimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]]


def _bit_width(dtype: np.dtype) -> int:
    return 1 if ir_dtypes.is_bool(dtype) else 8 * dtype.itemsize


def _precision_key(dtype: np.dtype) -> tuple[int, int, int, bool]:
    """XLA's "higher precision type" order: exponent range, mantissa, bit width, signedness."""
    if ir_dtypes.is_float(dtype):
        info = ml_dtypes.finfo(dtype)
        return (info.maxexp, info.nmant, info.bits, True)
    return (-1, -1, _bit_width(dtype), not ir_dtypes.is_unsigned_int(dtype))


def _parse_dimension_numbers(dimension_numbers: Any) -> tuple[tuple[int, ...], ...]:
    """((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)) as four tuples of ints."""
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        return tuple(tuple(int(d) for d in dims) for dims in (lc, rc, lb, rb))
    except (TypeError, ValueError):
        raise TypeError(
            "mlax.lax.dot_general: dimension_numbers must be ((lhs_contracting, rhs_contracting), "
            f"(lhs_batch, rhs_batch)), each a sequence of ints; got {dimension_numbers!r}") from None


def _result_dtype(operand_dtype: np.dtype, preferred: Any) -> np.dtype:
    if preferred is None:
        return operand_dtype
    preferred = front_dtypes.canonicalize(np.dtype(preferred))
    if not ir_dtypes.is_float(operand_dtype) and _bit_width(preferred) < _bit_width(operand_dtype):
        raise TypeError(f"mlax.lax.dot_general: preferred_element_type {preferred} must not be narrower "
                        f"than the operand type {operand_dtype}")
    return preferred


def dot_general(lhs: Any, rhs: Any, dimension_numbers: DimensionNumbers, precision: Any = None,
                preferred_element_type: Any = None) -> Any:
    """Contract ``lhs`` with ``rhs``: result dims are batch, lhs free, rhs free (StableHLO order)."""
    precision = canonicalize_precision(precision, "mlax.lax.dot_general")
    lc, rc, lb, rb = _parse_dimension_numbers(dimension_numbers)
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    common = max(lhs.dtype, rhs.dtype, key=_precision_key)
    lhs, rhs = (x if x.dtype == common else convert_element_type(x, common, x.weak_type) for x in (lhs, rhs))
    result = _result_dtype(common, preferred_element_type)
    # Float operands with an integer or bool result: contract in the operand type, then convert
    # (XLA rounds to the operand type in between, so f16 -> int8 sees the f16-rounded sum).
    float_to_int = ir_dtypes.is_float(common) and not ir_dtypes.is_float(result)
    accumulate = common if float_to_int else result
    out = bind("dot_general", lhs, rhs, lhs_contracting_dimensions=lc, rhs_contracting_dimensions=rc,
               lhs_batch_dimensions=lb, rhs_batch_dimensions=rb, result_dtype=accumulate, precision=precision)
    return out if accumulate == result else convert_element_type(out, result, out.weak_type)


def dot(lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None, *,
        dimension_numbers: DimensionNumbers | None = None) -> Any:
    """Vector-vector, matrix-vector, vector-matrix or matrix-matrix product (or any dot_general)."""
    if dimension_numbers is None:
        lhs, rhs = as_operand(lhs), as_operand(rhs)
        if not (1 <= lhs.ndim <= 2 and 1 <= rhs.ndim <= 2 and lhs.shape[-1] == rhs.shape[0]):
            raise ValueError(
                "mlax.lax.dot: without dimension_numbers the operands must be vectors or matrices whose "
                f"inner sizes agree, got shapes {lhs.shape} and {rhs.shape}; use dot_general")
        dimension_numbers = (((lhs.ndim - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Matrix product over the last two dims, batched over all leading dims (equal ranks >= 2)."""
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise ValueError(f"mlax.lax.batch_matmul: operands must have the same rank >= 2, got shapes "
                         f"{lhs.shape} and {rhs.shape}")
    batch = tuple(range(lhs.ndim - 2))
    return dot_general(lhs, rhs, (((lhs.ndim - 1,), (rhs.ndim - 2,)), (batch, batch)), precision)


# jax.lax.linalg's decompositions live here too (mlax.lax.linalg.cholesky ...), not in mlax.lax itself.
from mlax.lax.decompositions import (  # noqa: E402, F401
    cholesky,
    lu,
    lu_pivots_to_permutation,
    triangular_solve,
)
from mlax.lax.decompositions_spectral import eigh, qr, svd  # noqa: E402, F401
from mlax.lax.eig import eig  # noqa: E402, F401
from mlax.lax.householder import (  # noqa: E402, F401
    geqp3,
    geqrf,
    hessenberg,
    householder_product,
    ormqr,
    tridiagonal,
)
from mlax.lax.schur import schur  # noqa: E402, F401
from mlax.lax.tridiagonal import tridiagonal_solve  # noqa: E402, F401

__all__ = ["batch_matmul", "dot", "dot_general"]
