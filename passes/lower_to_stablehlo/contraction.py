"""Rule for dot_general: `stablehlo.dot_general` with mlax's dimension numbers.

mlax defines the contraction in `result_dtype`: the operands are converted to it and
multiplied and summed in it. StableHLO's dot_general with a wider result type means the
same (JAX's `preferred_element_type`), so operands that widen exactly into the result type
(bf16 -> f32, int8 -> int32, ...) go in as they are, which keeps XLA's mixed-precision
kernels; others (f64 -> f32, int32 -> f32, ...) are converted first, as the reference
rounds them. f16/bf16 dots of their own type are XLA's, which accumulate in f32 and round
once, as the reference. Boolean operands (or of ands) are counted in i32 and the count
compared with 0 for a boolean result; XLA has no boolean dot. The op's precision (absent:
DEFAULT for both operands) becomes `precision_config`, which jax emits on every dot and
convolution whatever the element type.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from mlax.dialect import dtypes, read_attributes
from mlax.passes.lower_to_stablehlo.common import (
    Rule,
    compare,
    convert,
    element_type,
    enum,
    i64_array,
    int_list,
    is_bool,
    splat,
    value,
    with_element,
)

_DIMENSION_NUMBERS = ("lhs_batching_dimensions", "rhs_batching_dimensions",
                      "lhs_contracting_dimensions", "rhs_contracting_dimensions")


def _widens_exactly(operand: ir.Type, result: ir.Type) -> bool:
    """Whether every value of ``operand`` is one of ``result`` (NumPy's safe casting)."""
    return np.can_cast(dtypes.from_mlir(operand), dtypes.from_mlir(result), casting="safe")


def precision_config(op: ir.Operation) -> str:
    """The op's (lhs, rhs) precision as StableHLO's ``precision_config`` array."""
    return "[" + ", ".join(enum("precision", p) for p in read_attributes(op)["precision"]) + "]"


def _dot_general(op: ir.Operation) -> ir.Value:
    result = op.results[0].type
    target = element_type(result)
    work = ir.IntegerType.get_signless(32) if is_bool(target) else target
    operand = element_type(op.operands[0])
    keep = not is_bool(operand) and _widens_exactly(operand, work)
    lhs, rhs = (x if keep else convert(x, work) for x in op.operands)
    numbers = {"lhs_batching_dimensions": i64_array(op, "lhs_batch_dimensions"),
               "rhs_batching_dimensions": i64_array(op, "rhs_batch_dimensions"),
               "lhs_contracting_dimensions": i64_array(op, "lhs_contracting_dimensions"),
               "rhs_contracting_dimensions": i64_array(op, "rhs_contracting_dimensions")}
    text = ", ".join(f"{key} = {int_list(numbers[key])}" for key in _DIMENSION_NUMBERS if numbers[key])
    dot = value("dot_general", [lhs, rhs], with_element(result, work),
                {"dot_dimension_numbers": f"#stablehlo.dot<{text}>",
                 "precision_config": precision_config(op)})
    return compare(dot, splat(0, dot.type), "NE") if is_bool(target) else dot


RULES: dict[str, Rule] = {"dot_general": _dot_general}
