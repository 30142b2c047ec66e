"""Reductions: reduce_{sum,prod,max,min,and,or} over dimensions, argmax/argmin, cumulative ops.

Every reduction is a monoid (a NumPy ufunc, its identity and the dtypes it accepts) in one
table, `MONOIDS`; reduce_* (over dimensions) and cum* (along an axis) are factories over
that table, argmax/argmin a third factory. Semantics follow StableHLO `reduce` /
`reduce_window` as JAX emits them: integers wrap, max/min propagate NaN and order
`-0.0 < +0.0`, empty reductions give the identity, and the order of a float accumulation
is implementation-defined.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlax.dialect import dtypes
from mlax.dialect.ops.common import (
    compute_dtype,
    is_int_or_bool,
    is_numeric,
    normalize_axes,
    op_type_error,
    op_value_error,
    require_dtype,
)
from mlax.dialect.ops.elementwise import maximum, minimum
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec


def _lowest(dtype: np.dtype) -> Any:
    if dtypes.is_inexact(dtype):  # complex: -inf + 0i, JAX's identity
        return -np.inf
    return False if dtypes.is_bool(dtype) else np.iinfo(dtype).min


def _highest(dtype: np.dtype) -> Any:
    if dtypes.is_inexact(dtype):
        return np.inf
    return True if dtypes.is_bool(dtype) else np.iinfo(dtype).max


def _all_ones(dtype: np.dtype) -> Any:
    return np.array(-1).astype(dtype)  # every bit set: -1, the unsigned maximum, True


@dataclass(frozen=True)
class Monoid:
    """A reduction: its combiner, its identity and the operand dtypes it accepts."""

    noun: str
    ufunc: np.ufunc
    identity: Callable[[np.dtype], Any]
    identity_doc: str
    accepts: Callable[[np.dtype], bool]
    accepts_doc: str


_ANY = (lambda dtype: True, "any")
_NUMERIC = (is_numeric, "numeric")

MONOIDS: dict[str, Monoid] = {
    "sum": Monoid("sum", np.add, lambda d: 0, "0", *_NUMERIC),
    "prod": Monoid("product", np.multiply, lambda d: 1, "1", *_NUMERIC),
    "max": Monoid("maximum", np.maximum, _lowest, "-inf, the minimum integer, or false", *_ANY),
    "min": Monoid("minimum", np.minimum, _highest, "+inf, the maximum integer, or true", *_ANY),
    "and": Monoid("bitwise and", np.bitwise_and, _all_ones, "all bits set (-1, the unsigned maximum, "
                  "or true)", is_int_or_bool, "integer or boolean"),
    "or": Monoid("bitwise or", np.bitwise_or, lambda d: 0, "0 (false)", is_int_or_bool,
                 "integer or boolean"),
}


def _check_axis(op: str, axis: int, ndim: int) -> None:
    if not 0 <= axis < ndim:
        raise op_value_error(op, f"axis {axis} out of range for rank {ndim} (axes are 0 .. rank-1)")


def _fix_zero_sign(kind: str, result: np.ndarray, x: np.ndarray,
                   any_of: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Give max a +0.0 and min a -0.0 whenever that zero was among the combined elements.

    NumPy keeps whichever zero it met first; XLA orders -0.0 below +0.0. ``any_of`` combines
    a mask the way the values were combined (over the reduced dims, or cumulatively).
    """
    if kind not in ("max", "min") or not dtypes.is_float(x.dtype):
        return result
    want_negative = kind == "min"
    present = any_of((x == 0) & (np.signbit(x) == want_negative))
    zero = np.array(-0.0 if want_negative else 0.0, result.dtype)
    return np.where((result == 0) & present, zero, result)


# --- reduce over dimensions ------------------------------------------------------------------


_WIDER = {np.dtype(np.float32): np.dtype(np.float64), np.dtype(np.complex64): np.dtype(np.complex128)}
# Sums at most this long keep f32 (what XLA's sums of them round like); longer ones widen.
_LONG_SUM = 256


def _accumulator_dtype(kind: str, dtype: np.dtype, count: int) -> np.dtype:
    """Long f32 (complex64) sums of ``count`` elements accumulate in double precision: NumPy adds
    along a strided axis one element at a time (a column sum of 10,000 f32 rows was off by 1e-2),
    and the result, rounded once, is then within jax's error of the exact one whatever the
    order. Short sums, products and halves (in f32) round as before."""
    work = compute_dtype(dtype)
    return _WIDER.get(work, work) if kind == "sum" and count > _LONG_SUM else work


_FLOAT_ORDER = ("Integers wrap. Float accumulation order is implementation-defined; the reference "
                "accumulates f16/bf16 in f32 and rounds once.")
_SUM_ORDER = ("Integers wrap. Float accumulation order is implementation-defined; the reference "
              "accumulates f16/bf16 in f32, and f32 sums of more than 256 elements in f64 (complex64 "
              "in complex128), and rounds once.")
_EXTREME = ("NaN propagates (any NaN gives NaN); `-0.0 < +0.0`. On booleans it is logical {}. "
            "Complex numbers compare lexicographically (real part, then imaginary) as in JAX, "
            "where a comparison with a NaN part is false: the elements are combined one by one "
            "in row-major order from the identity, as XLA does, and an element with a NaN part "
            "stands until a later one replaces it.")
_BITWISE = "Bitwise {} on integers, logical {} on booleans."
_REDUCE_NOTES = {
    "sum": _SUM_ORDER,
    "prod": _FLOAT_ORDER,
    "max": _EXTREME.format("or"),
    "min": _EXTREME.format("and"),
    "and": _BITWISE.format("and", "and"),
    "or": _BITWISE.format("or", "or"),
}


def _complex_extreme_fold(kind: str, x: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
    """Complex max/min over ``dims`` with a NaN among the parts: jax's lexicographic order is
    not associative there, so the elements are combined as XLA combines them, one by one in
    row-major order from the identity (NumPy's reduce would give NaN wherever one is met)."""
    combine = maximum if kind == "max" else minimum
    kept = [d for d in range(x.ndim) if d not in dims]
    rows = np.transpose(x, kept + list(dims)).reshape(*[x.shape[d] for d in kept], -1)
    result = np.full(rows.shape[:-1], MONOIDS[kind].identity(x.dtype), x.dtype)
    for i in range(rows.shape[-1]):
        result = combine(result, rows[..., i])
    return result


def define_reduce(kind: str) -> None:
    """``reduce_<kind>(operand) {dimensions}``: combine all elements along ``dimensions``."""
    name = f"reduce_{kind}"
    monoid = MONOIDS[kind]

    def infer(x: TensorSpec, *, dimensions: tuple[int, ...]) -> TensorSpec:
        require_dtype(name, x, monoid.accepts, monoid.accepts_doc)
        dims = normalize_axes(name, dimensions, x.ndim)
        return TensorSpec(tuple(d for i, d in enumerate(x.shape) if i not in dims), x.dtype)

    def reference(x: np.ndarray, *, dimensions: tuple[int, ...]) -> np.ndarray:
        dims = tuple(dimensions)
        if not dims:
            return x.copy()
        if kind in ("max", "min") and dtypes.is_complex(x.dtype) and np.isnan(x).any():
            return _complex_extreme_fold(kind, x, dims)
        work = _accumulator_dtype(kind, x.dtype, math.prod(x.shape[d] for d in dims))
        xs = x.astype(work, copy=False)
        out = monoid.ufunc.reduce(xs, axis=dims, dtype=work, initial=monoid.identity(work))
        out = _fix_zero_sign(kind, np.asarray(out), xs, lambda m: np.any(m, axis=dims))
        return out.astype(x.dtype)

    define_op(
        name, "(operand: T) -> (result: U)",
        attributes={"dimensions": "i64s"},
        infer=infer, reference=reference, weak_type="first",
        zero_derivative=kind in ("and", "or"), linear=(0,) if kind == "sum" else (),
        complex=kind in ("sum", "prod", "max", "min"),
        summary=f"The {monoid.noun} of the elements along `dimensions`, which the result drops.",
        description=f"""
Operand element type: {monoid.accepts_doc}; the result has the operand's element type and
the operand's shape without `dimensions` (distinct, in `0 .. rank-1`; an empty list
returns the operand unchanged). Reducing zero elements gives the identity,
{monoid.identity_doc}. {_REDUCE_NOTES[kind]}
""",
    )


for _kind in MONOIDS:
    define_reduce(_kind)


# --- argmax / argmin -------------------------------------------------------------------------


def define_arg_extreme(kind: str) -> None:
    """``arg<kind>(operand) {axis, index_dtype}``: index of the first extreme along ``axis``."""
    name = f"arg{kind}"
    pick = np.argmax if kind == "max" else np.argmin

    def infer(x: TensorSpec, *, axis: int, index_dtype: Any) -> TensorSpec:
        _check_axis(name, axis, x.ndim)
        if x.shape[axis] == 0:
            raise op_value_error(name, f"axis {axis} of operand shape {x.shape} is empty: there is "
                                       "no index to return")
        index_dtype = np.dtype(index_dtype)
        if not (dtypes.is_int(index_dtype) and dtypes.is_supported(index_dtype)):
            raise op_type_error(name, f"index_dtype must be an integer type, got {index_dtype}")
        return TensorSpec(x.shape[:axis] + x.shape[axis + 1:], index_dtype)

    def reference(x: np.ndarray, *, axis: int, index_dtype: Any) -> np.ndarray:
        # NumPy's argmax/argmin already return the first NaN; halves widen exactly to f32.
        return pick(x.astype(compute_dtype(x.dtype), copy=False), axis=axis).astype(index_dtype)

    define_op(
        name, "(operand: T) -> (result: U)",
        attributes={"axis": "i64", "index_dtype": "type"},
        infer=infer, reference=reference, weak_type="never", zero_derivative=True,
        summary=f"Index of the {kind}imum along `axis` (the first one on ties), as `index_dtype`.",
        description=f"""
Operand: any element type (on booleans `true > false`). `axis` is in `0 .. rank-1` and
must not be empty; the result drops `axis` and has element type `index_dtype`, an
integer type (indices wrap if it is too narrow). NaN counts as the {kind}imum: the index of
the first NaN wins. Equal values (including `-0.0` and `+0.0`) give the first index.
""",
    )


define_arg_extreme("max")
define_arg_extreme("min")


# --- cumulative ------------------------------------------------------------------------------


_LONG_CUMSUM = 256  # the CPU backend's block: longer f32 running sums round once per element

_ROUNDING = ("Integers wrap; the order of float accumulation is implementation-defined. The "
             "reference accumulates in the operand's element type, rounding every partial result "
             "as JAX's `reduce_window` lowering does (int8 wraps, f16 is not widened to f32), but "
             "for f32 (complex64) sums along more than 256 elements, which accumulate in f64 "
             "(complex128) and round each result once: a sequential f32 sum's error grows with "
             "the axis, XLA's does not.")
_RUNNING_EXTREME = "A NaN propagates to every later element; `-0.0 < +0.0`."
_CUMULATIVE_NOTES = {"sum": _ROUNDING, "prod": _ROUNDING, "max": _RUNNING_EXTREME, "min": _RUNNING_EXTREME}


def define_cumulative(kind: str) -> None:
    """``cum<kind>(operand) {axis, reverse}``: inclusive prefix (or suffix) reduction."""
    name = f"cum{kind}"
    monoid = MONOIDS[kind]

    def infer(x: TensorSpec, *, axis: int, reverse: int) -> TensorSpec:
        require_dtype(name, x, is_numeric, "numeric")
        _check_axis(name, axis, x.ndim)
        if reverse not in (0, 1):
            raise op_value_error(name, f"reverse must be 0 or 1, got {reverse}")
        return x

    def reference(x: np.ndarray, *, axis: int, reverse: int) -> np.ndarray:
        xs = np.flip(x, axis) if reverse else x
        long_f32 = kind == "sum" and x.shape[axis] > _LONG_CUMSUM
        work = _WIDER.get(np.dtype(x.dtype), x.dtype) if long_f32 else x.dtype
        out = monoid.ufunc.accumulate(xs.astype(work, copy=False), axis=axis, dtype=work).astype(x.dtype)
        out = _fix_zero_sign(kind, out, xs, lambda m: np.logical_or.accumulate(m, axis=axis))
        return np.flip(out, axis).copy() if reverse else out

    define_op(
        name, "(operand: T) -> (result: T)",
        attributes={"axis": "i64", "reverse": "i64"},
        infer=infer, reference=reference, weak_type="first",
        linear=(0,) if kind == "sum" else (), complex=True,
        summary=f"Inclusive running {monoid.noun} along `axis`; `reverse = 1` runs from the end.",
        description=f"""
Operand: numeric (not boolean); the result has the operand's type. `axis` is in
`0 .. rank-1`; `reverse` is `0` (result[i] combines elements 0..i) or `1` (elements
i..n-1). {_CUMULATIVE_NOTES[kind]}
""",
    )


for _kind in ("sum", "prod", "max", "min"):
    define_cumulative(_kind)
