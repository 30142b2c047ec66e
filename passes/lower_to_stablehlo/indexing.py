"""Rules for gather and scatter: `stablehlo.gather` / `stablehlo.scatter` with mlax's own
dimension numbers (they are StableHLO's, batching dimensions included).

What differs is the out-of-bounds behaviour, which mlax names by `mode` and StableHLO fixes:
a StableHLO gather clamps every start into ``[0, dim - slice_size]`` (mlax's "clip" and
"promise_in_bounds"), and XLA's scatter skips a whole update window whose start does not fit
(mlax's "fill" and "promise_in_bounds"). So a "fill" gather is a clamped gather whose windows
with an out-of-range start are replaced by the fill value (a mask computed from the start
indices, broadcast over the window dimensions, as jax lowers it), and a "clip" scatter clamps
its starts before scattering. Start indices are first made signed (unsigned ones read as
unsigned: ui32 widened to i64, ui64 saturated at the i64 maximum, as the interpreter does) and
at least 32 bits wide, so the bounds always fit and compare as the interpreter's int64.

The scatter's combiner is its update region: the update itself for `scatter`, add / multiply
/ minimum / maximum for the others (or / and on booleans). mlax has no `unique_indices` or
`indices_are_sorted` flags, so both stay false. XLA leaves the order in which duplicate starts
combine unspecified; its CPU backend visits updates in row-major order as the interpreter
does, which the tests check for the combiners (plain `scatter` with duplicates is tested
without them: which update wins is only pinned down by the interpreter).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from mlir import ir

from mlax.dialect import dtypes, read_attributes
from mlax.dialect.ops.indexing import fill_value, gather_attrs
from mlax.passes.lower_to_stablehlo.common import (
    Rule,
    body,
    broadcast,
    compare,
    constant,
    convert,
    dims,
    element_type,
    hlo,
    is_bool,
    is_unsigned,
    reshape,
    scalar_reducer,
    scalar_type,
    select,
    splat,
    struct,
    tensor_type,
    value,
    with_element,
)


def _signed_indices(indices: ir.Value) -> ir.Value:
    """Start indices as i32 or i64 holding the same numbers (ui64 saturated at the i64 max)."""
    t = element_type(indices)
    width = ir.IntegerType(t).width
    if not is_unsigned(t) and width >= 32:
        return indices
    if width == 64:
        indices = value("minimum", [indices, splat(np.iinfo(np.int64).max, indices.type)], indices.type)
    wide = 64 if is_unsigned(t) and width >= 32 else 32
    return convert(indices, ir.IntegerType.get_signless(wide))


def _limits(indices: ir.Value, start_map: Sequence[int], index_vector_dim: int,
            shape: Sequence[int], sizes: Sequence[int]) -> ir.Value:
    """A tensor of the indices' type holding, at each index vector element k, the largest start
    that fits along operand dimension ``start_map[k]``: ``dim - window``."""
    t = tensor_type(indices)
    limits = np.array([shape[d] - sizes[d] for d in start_map], np.int64)
    if index_vector_dim < t.rank:
        return constant(limits.reshape([-1 if d == index_vector_dim else 1 for d in range(t.rank)]), t)
    return constant(limits.reshape(()), t)  # an implicit index vector of one element


def _fits(indices: ir.Value, limits: ir.Value, index_vector_dim: int) -> ir.Value:
    """Whether every start of each index vector is in ``[0, limit]``: i1 over the indices' batch
    dimensions."""
    inside = value("and", [compare(indices, splat(0, indices.type), "GE"),
                           compare(indices, limits, "LE")], with_element(indices, _i1()))
    t = tensor_type(inside)
    if index_vector_dim == t.rank:
        return inside
    batch = [n for d, n in enumerate(t.shape) if d != index_vector_dim]
    reduce = hlo("reduce", [inside, splat(1, scalar_type(_i1()))],
                 ir.RankedTensorType.get(batch, _i1()),
                 {"dimensions": ir.DenseI64ArrayAttr.get([index_vector_dim])}, regions=1)
    scalar_reducer(reduce, 0, _i1(), "and")
    return reduce.result


def _i1() -> ir.Type:
    return ir.IntegerType.get_signless(1)


_GATHER_NUMBERS = ("offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                   "start_indices_batching_dims", "start_index_map", "index_vector_dim")


def gather(operand: ir.Value, indices: ir.Value, result: ir.Type, numbers: dict) -> ir.Value:
    """``stablehlo.gather`` with the dimension numbers and ``slice_sizes`` of mlax's gather."""
    dimension_numbers = struct("gather", **{key: numbers[key] for key in _GATHER_NUMBERS})
    return value("gather", [operand, indices], result,
                 {"dimension_numbers": dimension_numbers, "slice_sizes": dims(numbers["slice_sizes"])})


def _gather(op: ir.Operation) -> ir.Value:
    operand, indices = op.operands
    a = read_attributes(op)
    result = tensor_type(op.results[0])
    if 0 in result.shape:
        return splat(0, result)
    indices = _signed_indices(indices)
    out = gather(operand, indices, result, a)
    if a["mode"] != "fill" or not a["start_index_map"]:
        return out
    shape = tensor_type(operand).shape
    limits = _limits(indices, a["start_index_map"], a["index_vector_dim"], shape, a["slice_sizes"])
    fits = _fits(indices, limits, a["index_vector_dim"])
    batch_dims = [d for d in range(result.rank) if d not in a["offset_dims"]]
    mask = broadcast(fits, with_element(result, _i1()), batch_dims)
    fill = splat(fill_value(dtypes.from_mlir(result.element_type)), result)
    return select(mask, out, fill)


# scatter op -> the stablehlo op combining (current, update): numbers, then booleans
_COMBINERS = {"scatter_add": ("add", "or"), "scatter_mul": ("multiply", "and"),
              "scatter_min": ("minimum", "and"), "scatter_max": ("maximum", "or")}


def _scatter(name: str) -> Rule:
    def rule(op: ir.Operation) -> ir.Value:
        operand, indices, updates = op.operands
        a = read_attributes(op)
        shape, updates_shape = tensor_type(operand).shape, tensor_type(updates).shape
        if 0 in shape or 0 in updates_shape:
            return operand
        if not shape:
            return _scalar_scatter(name, operand, updates)
        indices = _signed_indices(indices)
        start_map, ivd = a["scatter_dims_to_operand_dims"], a["index_vector_dim"]
        if a["mode"] == "clip" and start_map:
            sizes = gather_attrs(a, shape, updates_shape, a["mode"])["slice_sizes"]  # the window
            limits = _limits(indices, start_map, ivd, shape, sizes)
            indices = value("clamp", [splat(0, indices.type), indices, limits], indices.type)
        numbers = struct("scatter", update_window_dims=a["update_window_dims"],
                         inserted_window_dims=a["inserted_window_dims"],
                         input_batching_dims=a["input_batching_dims"],
                         scatter_indices_batching_dims=a["scatter_indices_batching_dims"],
                         scatter_dims_to_operand_dims=start_map, index_vector_dim=ivd)
        return _scatter_op(name, operand, indices, updates, numbers)

    return rule


def _scatter_op(name: str, operand: ir.Value, indices: ir.Value, updates: ir.Value, numbers: str) -> ir.Value:
    scatter = hlo("scatter", [operand, indices, updates], operand.type,
                  {"scatter_dimension_numbers": numbers}, regions=1)
    element = element_type(operand)
    if name == "scatter":
        body(scatter, 0, [scalar_type(element)] * 2, lambda current, update: [update])
    else:
        scalar_reducer(scatter, 0, element, _COMBINERS[name][is_bool(element)])
    return scatter.result


def _scalar_scatter(name: str, operand: ir.Value, updates: ir.Value) -> ir.Value:
    """A rank-0 operand (every update combines into it, in order) as a one-element vector whose
    start is 0 for every update: XLA's scatter simplifier rejects a rank-0 scatter."""
    rank = tensor_type(updates).rank
    i32 = ir.IntegerType.get_signless(32)
    zeros = splat(0, ir.RankedTensorType.get([*tensor_type(updates).shape, 1], i32))
    numbers = struct("scatter", update_window_dims=(), inserted_window_dims=(0,),
                     scatter_dims_to_operand_dims=(0,), index_vector_dim=rank)
    vector = _scatter_op(name, reshape(operand, [1]), zeros, updates, numbers)
    return reshape(vector, [])


RULES: dict[str, Rule] = {"gather": _gather, **{name: _scatter(name) for name in (
    "scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max")}}
