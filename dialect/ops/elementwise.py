"""Elementwise ops: unary and binary math on operands of one shape and dtype.

Semantics follow StableHLO (and so JAX on XLA): integer division truncates and x/0 is -1
(signed) or all ones (unsigned); shifts by the bit width or more give 0 (or the sign fill);
max/min propagate NaN; round rounds half away from zero unless told otherwise.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mlax.dialect import dtypes
from mlax.dialect.ops.common import compute_dtype, require_dtype, require_same_types
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec

DtypeCheck = tuple[Callable[[np.dtype], bool], str]
FLOAT: DtypeCheck = (dtypes.is_float, "floating-point")
NUMERIC: DtypeCheck = (lambda d: not dtypes.is_bool(d), "numeric")
SIGNED: DtypeCheck = (lambda d: dtypes.is_float(d) or dtypes.is_signed_int(d), "signed numeric")
INTEGER: DtypeCheck = (dtypes.is_int, "integer")
INT_OR_BOOL: DtypeCheck = (lambda d: dtypes.is_int(d) or dtypes.is_bool(d), "integer or boolean")
ANY: DtypeCheck = (lambda d: True, "any")


def _run(fn: Callable[..., np.ndarray], *xs: np.ndarray) -> np.ndarray:
    """Apply ``fn`` in the compute dtype and cast back, with NumPy's warnings silenced."""
    out_dtype = xs[0].dtype
    work = compute_dtype(out_dtype)
    with np.errstate(all="ignore"):
        result = fn(*(np.asarray(x).astype(work, copy=False) for x in xs))
    return np.asarray(result).astype(out_dtype, copy=False)


def define_unary(name: str, fn: Callable[[np.ndarray], np.ndarray], check: DtypeCheck,
                 summary: str) -> None:
    """An op ``(operand: T) -> (result: T)`` computed by ``fn``."""

    def infer(x: TensorSpec) -> TensorSpec:
        require_dtype(name, x, *check)
        return x

    define_op(name, "(operand: T) -> (result: T)", infer=infer,
              reference=lambda x: _run(fn, x), summary=summary)


def define_binary(name: str, fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
                  check: DtypeCheck, summary: str) -> None:
    """An op ``(lhs: T, rhs: T) -> (result: T)`` computed by ``fn``."""

    def infer(lhs: TensorSpec, rhs: TensorSpec) -> TensorSpec:
        require_same_types(name, [lhs, rhs], ["lhs", "rhs"])
        require_dtype(name, lhs, *check)
        return lhs

    define_op(name, "(lhs: T, rhs: T) -> (result: T)", infer=infer,
              reference=lambda x, y: _run(fn, x, y), summary=summary)


# --- unary -----------------------------------------------------------------------------

define_unary("neg", np.negative, NUMERIC, "Negation, -x (wraps for the most negative integer).")
define_unary("exp", np.exp, FLOAT, "Natural exponential e**x.")
define_unary("tanh", np.tanh, FLOAT, "Hyperbolic tangent.")

# --- binary ----------------------------------------------------------------------------

define_binary("add", np.add, ANY, "Addition x + y (logical or on booleans).")
define_binary("sub", np.subtract, NUMERIC, "Subtraction x - y.")
define_binary("mul", np.multiply, ANY, "Multiplication x * y (logical and on booleans).")
