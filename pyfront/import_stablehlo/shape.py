"""Shape StableHLO ops, constants and iota -> mlax.lax shape functions.

dynamic_slice and dynamic_update_slice bind the primitives directly: StableHLO clamps
start indices into bounds, which is the primitive's semantics, while the lax wrappers first
count negative indices from the end (jax's convention, which jax applied before lowering).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from mlir import ir

import mlax.lax as lax
from mlax.core import bind
from mlax.dialect import dtypes
from mlax.import_stablehlo.core import (
    Entry,
    Importer,
    integer,
    ints,
    required,
    result_spec,
    unsupported,
    value_of_constant,
    value_spec,
)

CONVERTERS: dict[str, Entry] = {}


def constant(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    """A constant op of the current trace (so the imported IR keeps jax's constants where jax
    had them), or an Array eagerly; `Importer.concrete` still reads its value from the op."""
    value = value_of_constant(required(op, "value"), op)
    return [bind("constant", value=value)]


def iota(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    spec = result_spec(op)
    return [lax.broadcasted_iota(spec.dtype, spec.shape, integer(op, "iota_dimension"))]


def _start_indices(op: ir.Operation, indices: list[Any]) -> list[Any]:
    """Start indices of one integer dtype (the primitive's rule); mixed ones take the widest."""
    kinds = [value_spec(op, v).dtype for v in op.operands[len(op.operands) - len(indices):]]
    if len(set(kinds)) <= 1:
        return indices
    widest = max(kinds, key=lambda d: (np.dtype(d).itemsize, dtypes.is_signed_int(d)))
    return [lax.convert_element_type(i, widest) for i in indices]


def dynamic_slice(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    x, *indices = args
    sizes = tuple(ints(op, "slice_sizes"))
    return [bind("dynamic_slice", x, *_start_indices(op, indices), slice_sizes=sizes)]


def dynamic_update_slice(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    x, update, *indices = args
    return [bind("dynamic_update_slice", x, update, *_start_indices(op, indices))]


def pad(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    x, value = args
    low, high = ints(op, "edge_padding_low"), ints(op, "edge_padding_high")
    interior = ints(op, "interior_padding", [0] * len(low))
    return [lax.pad(x, value, list(zip(low, high, interior, strict=True)))]


def get_dimension_size(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    spec = value_spec(op, op.operands[0])
    dimension = integer(op, "dimension")
    if not 0 <= dimension < len(spec.shape):
        raise unsupported(op, f"dimension {dimension} of a rank-{len(spec.shape)} operand")
    return [bind("constant", value=np.array(spec.shape[dimension], result_spec(op).dtype))]


CONVERTERS.update({
    "stablehlo.constant": Entry(constant, "mlax.constant"),
    "stablehlo.iota": Entry(iota, "mlax.iota"),
    "stablehlo.broadcast_in_dim": Entry(
        lambda imp, op, args: [lax.broadcast_in_dim(args[0], result_spec(op).shape,
                                                    ints(op, "broadcast_dimensions"))],
        "mlax.broadcast_in_dim"),
    "stablehlo.broadcast": Entry(
        lambda imp, op, args: [lax.broadcast(args[0], ints(op, "broadcast_sizes"))], "mlax.broadcast_in_dim"),
    "stablehlo.reshape": Entry(lambda imp, op, args: [lax.reshape(args[0], result_spec(op).shape)],
                               "mlax.reshape"),
    "stablehlo.transpose": Entry(lambda imp, op, args: [lax.transpose(args[0], ints(op, "permutation"))],
                                 "mlax.transpose"),
    "stablehlo.reverse": Entry(lambda imp, op, args: [lax.rev(args[0], ints(op, "dimensions"))], "mlax.rev"),
    "stablehlo.slice": Entry(
        lambda imp, op, args: [lax.slice(args[0], ints(op, "start_indices"), ints(op, "limit_indices"),
                                         ints(op, "strides", [1] * len(ints(op, "start_indices"))))],
        "mlax.slice"),
    "stablehlo.concatenate": Entry(lambda imp, op, args: [lax.concatenate(args, integer(op, "dimension"))],
                                   "mlax.concatenate (a chain)"),
    "stablehlo.pad": Entry(pad, "mlax.pad"),
    "stablehlo.dynamic_slice": Entry(dynamic_slice, "mlax.dynamic_slice"),
    "stablehlo.dynamic_update_slice": Entry(dynamic_update_slice, "mlax.dynamic_update_slice"),
    "stablehlo.get_dimension_size": Entry(get_dimension_size, "mlax.constant"),
})
