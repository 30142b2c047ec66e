"""gather and scatter -> the mlax primitives, with StableHLO's dimension numbers as they are.

The primitives are bound directly: their attributes are StableHLO's own (any
index_vector_dim), while mlax.lax.gather/scatter take jax's convention of a trailing index
vector. StableHLO's gather clamps start indices (mlax mode "promise_in_bounds", which
clamps) and its scatter skips out-of-bounds windows (mode "fill"); jax writes its other
modes as explicit clamps and selects around them. A scatter's update body picks the variant:
returning the update is scatter, a monoid over (operand, update) scatter_add/mul/min/max.
"""

from __future__ import annotations

from typing import Any

from mlir import ir

from mlax.core import bind
from mlax.import_stablehlo.core import Entry, Importer, ints, single_block, struct, unsupported
from mlax.import_stablehlo.patterns import monoid, returns_argument

CONVERTERS: dict[str, Entry] = {}


def gather(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    x, indices = args
    fields = struct(op, "dimension_numbers")
    return [bind("gather", x, indices, offset_dims=tuple(fields.get("offset_dims", [])),
                 collapsed_slice_dims=tuple(fields.get("collapsed_slice_dims", [])),
                 operand_batching_dims=tuple(fields.get("operand_batching_dims", [])),
                 start_indices_batching_dims=tuple(fields.get("start_indices_batching_dims", [])),
                 start_index_map=tuple(fields.get("start_index_map", [])),
                 index_vector_dim=int(fields.get("index_vector_dim", 0)),
                 slice_sizes=tuple(ints(op, "slice_sizes")), mode="promise_in_bounds")]


_SCATTERS = {"sum": "scatter_add", "prod": "scatter_mul", "min": "scatter_min", "max": "scatter_max"}


def scatter(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    if len(args) != 3:
        raise unsupported(op, f"{len(op.results)} operands (mlax's scatter takes one)")
    x, indices, updates = args
    body = single_block(op, 0)
    kind = "replace" if returns_argument(body, 0, 1) else monoid(body, 0, 0, 1)
    name = "scatter" if kind == "replace" else _SCATTERS.get(kind or "")
    if name is None:
        raise unsupported(op, "an update body that neither returns the update nor is add, multiply, "
                              "minimum or maximum of the operand and the update")
    fields = struct(op, "scatter_dimension_numbers")
    return [bind(name, x, indices, updates, update_window_dims=tuple(fields.get("update_window_dims", [])),
                 inserted_window_dims=tuple(fields.get("inserted_window_dims", [])),
                 input_batching_dims=tuple(fields.get("input_batching_dims", [])),
                 scatter_indices_batching_dims=tuple(fields.get("scatter_indices_batching_dims", [])),
                 scatter_dims_to_operand_dims=tuple(fields.get("scatter_dims_to_operand_dims", [])),
                 index_vector_dim=int(fields.get("index_vector_dim", 0)), mode="fill")]


CONVERTERS.update({
    "stablehlo.gather": Entry(gather, "mlax.gather"),
    "stablehlo.scatter": Entry(scatter, "mlax.scatter{,_add,_mul,_min,_max}"),
})
