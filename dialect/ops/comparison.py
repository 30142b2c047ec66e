"""Comparison ops: compare, select and clamp.

NaN semantics follow IEEE and XLA: every ordered comparison with NaN is false and NE is
true; clamp propagates NaN from any of its three operands.
"""

from __future__ import annotations

import numpy as np

from mlax.dialect import dtypes
from mlax.dialect.ops.common import any_rank, op_type_error, op_value_error, require_dtype, require_same_types
from mlax.dialect.ops.elementwise import maximum, minimum, run_elementwise
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec

COMPARISONS = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
               "GT": np.greater, "GE": np.greater_equal}


def _infer_compare(lhs: TensorSpec, rhs: TensorSpec, *, comparison_direction: str) -> TensorSpec:
    require_same_types("compare", [lhs, rhs], ["lhs", "rhs"])
    if comparison_direction not in COMPARISONS:
        raise op_value_error("compare", f"comparison_direction must be one of {list(COMPARISONS)}, "
                                        f"got {comparison_direction!r}")
    if dtypes.is_complex(lhs.dtype) and comparison_direction not in ("EQ", "NE"):
        raise op_type_error("compare", f"comparison_direction {comparison_direction} does not accept "
                                       f"complex operands ({lhs.dtype}): complex numbers are unordered, "
                                       "only EQ and NE compare them")
    return TensorSpec(lhs.shape, np.bool_)


define_op(
    "compare", "(lhs: T, rhs: T) -> (result: U)",
    elementwise=True, zero_derivative=True, complex=True,
    attributes={"comparison_direction": "str"},
    infer=_infer_compare,
    reference=any_rank(lambda x, y, *, comparison_direction: COMPARISONS[comparison_direction](x, y)),
    summary="Elementwise comparison with an `i1` result; `comparison_direction` is one of "
            "EQ NE LT LE GT GE.",
    description="Any element type (complex: EQ and NE only). Floats compare as IEEE values "
                "(the StableHLO FLOAT "
                "comparison type): -0.0 == +0.0, and NaN is unordered, so EQ LT LE GT GE are "
                "false and NE is true. Unsigned types compare unsigned; booleans order "
                "false < true.",
)


def _check_rank0_or_same(op: str, spec: TensorSpec, name: str, like: TensorSpec, like_name: str) -> None:
    if spec.shape not in ((), like.shape):
        raise op_type_error(op, f"{name} must have the shape of {like_name} {like.shape} or be rank 0, "
                                f"got {spec.shape}")


def _infer_select(pred: TensorSpec, on_true: TensorSpec, on_false: TensorSpec) -> TensorSpec:
    require_dtype("select", pred, dtypes.is_bool, "boolean (i1)", operand="pred")
    require_same_types("select", [on_true, on_false], ["on_true", "on_false"])
    _check_rank0_or_same("select", pred, "pred", on_true, "on_true")
    return on_true


define_op(
    "select", "(pred: P, on_true: T, on_false: T) -> (result: T)",
    elementwise=True, stablehlo="stablehlo.select", linear=(1, 2), complex=True,
    infer=_infer_select,
    reference=any_rank(lambda pred, on_true, on_false: np.where(pred, on_true, on_false)),
    weak_type="rest",
    summary="on_true where pred is true, else on_false.",
    description="`pred` is an `i1` tensor of the cases' shape, or rank 0 to pick a whole case "
                "(as StableHLO allows). `on_true` and `on_false` have one type, the result's.",
)


def _infer_clamp(lo: TensorSpec, x: TensorSpec, hi: TensorSpec) -> TensorSpec:
    for spec, name in ((lo, "min"), (hi, "max")):
        if spec.dtype != x.dtype:
            raise op_type_error("clamp", f"{name} must have the operand's dtype {x.dtype}, got {spec.dtype}")
        _check_rank0_or_same("clamp", spec, name, x, "operand")
    return x


def _clamp(lo: np.ndarray, x: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """min(max(x, lo), hi); complex values compare by their real parts only, as XLA's clamp
    (jax lowers lax.clamp to it): lo where lo.re >= x.re, then hi where hi.re < that one's."""
    if not dtypes.is_complex(x.dtype):
        return run_elementwise(lambda x, lo, hi: minimum(maximum(x, lo), hi), x, lo, hi)
    raised = np.where(lo.real >= x.real, lo, x)
    return np.where(hi.real >= raised.real, raised, hi).astype(x.dtype)


define_op(
    "clamp", "(min: T, operand: U, max: V) -> (result: U)",
    elementwise=True, stablehlo="stablehlo.clamp", complex=True,
    infer=_infer_clamp,
    reference=any_rank(_clamp),
    summary="min(max(operand, min), max) elementwise.",
    description="`min` and `max` have the operand's element type and either its shape or rank 0 "
                "(each independently). Any element type. Defined as `min(max(operand, min), max)` "
                "with NaN-propagating max/min, so a NaN in any operand gives NaN, min > max gives "
                "max, and -0.0 orders below +0.0. Complex values compare by their real parts "
                "only (XLA's clamp): `min` where `min.re >= operand.re`, else the operand; then "
                "`max` unless `max.re >= ` that value's (a NaN real part there gives `max`).",
)
