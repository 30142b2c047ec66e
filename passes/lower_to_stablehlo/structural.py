"""Rules for the ops that make values: constant, iota, and the identity stop_gradient.

A constant keeps its dense `value` attribute, which is already of the result type (XLA reads
builtin dense attributes), except a splat, which is a scalar constant and a broadcast (XLA
would build its full-size literal), and non-splat booleans, which go as bytes and a convert; iota is
`stablehlo.iota` along `dimension` (XLA counts in the result type's own arithmetic: narrow
integers wrap, floats round, as the reference).
stop_gradient has no meaning after differentiation, nor sharding_constraint on one device:
their operand takes over their result.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from mlax.dialect.attrs import dense_attribute, dense_elements, dense_to_numpy
from mlax.passes.lower_to_stablehlo.common import (
    Rule,
    constant,
    convert,
    element_type,
    i64_attr,
    iota,
    is_bool,
    value,
)


def _constant(op: ir.Operation) -> ir.Value:
    attr = dense_attribute(op, "value")
    result = op.results[0].type
    if is_bool(result) and not ir.DenseElementsAttr(attr).is_splat:
        # Our MLIR prints big i1 constants as hex of one byte per element, XLA's parser reads
        # hex i1 data as packed bits: booleans travel as bytes instead.
        as_bytes = dense_elements(dense_to_numpy(attr).astype(np.int8))
        return convert(value("constant", [], as_bytes.type, {"value": as_bytes}), element_type(result))
    if ir.DenseElementsAttr(attr).is_splat:  # a scalar and a broadcast (`constant`), as jax writes it
        return constant(dense_to_numpy(attr).reshape(-1)[0], result)
    return value("constant", [], result, {"value": attr})


RULES: dict[str, Rule] = {
    "constant": _constant,
    "iota": lambda op: iota(op.results[0].type, i64_attr(op, "dimension")),
    "stop_gradient": lambda op: op.operands[0],
    # optimization_barrier is a renaming (its ``stablehlo`` trait; renamings.py).
    # Partitioned programs have none left (mlax-partition removes them); on one device the
    # layout means nothing.
    "sharding_constraint": lambda op: op.operands[0],
}
