"""Rules for gather and scatter: windows at start indices read from a tensor.

Each start index element is extracted, extended to i64 by its signedness and clamped into
[0, dim - window] as in dynamic.py; whether it fitted unclamped is kept for mode "fill".
gather is a linalg.generic over the result reading the operand at clamped start + window
offset (batching dimensions start at the batch coordinate); with mode "fill" a window whose
start did not fit yields the fill value. scatter is a nest of scf.for loops over the update
elements (the last dimension innermost) carrying the result, which starts as the operand:
each element is combined into the result at its (clamped, always in-bounds) position with
tensor.extract / tensor.insert, so duplicates combine in row-major order as the reference;
a dropped window (any mode but "clip" whose start did not fit) writes the old value back.
Boolean operands are read (and scattered) in i8 (0 / 1; add as or, mul as and), since i1
buffers do not lower to LLVM.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import arith, tensor

from mlax.dialect import read_attributes
from mlax.dialect.opviews import linalg
from mlax.passes.lower_to_linalg.common import (
    Body,
    Rule,
    generic,
    is_bool,
    is_complex,
    is_float,
    is_unsigned,
    loop_nest,
    scalar,
    width,
)
from mlax.passes.lower_to_linalg.reductions import MONOIDS


def _start(raw: ir.Value, limit: int, fits: bool) -> tuple[ir.Value, ir.Value | None]:
    """A start index element clamped into [0, limit] as an `index`, and (if ``fits``) whether
    it was inside."""
    i64 = ir.IntegerType.get_signless(64)
    unsigned = is_unsigned(raw.type)
    value = raw
    if width(raw.type) < 64:
        value = (arith.extui if unsigned else arith.extsi)(i64, raw)
    top = scalar(value.type, limit)
    inside = None
    if unsigned:
        if fits:
            inside = arith.cmpi(arith.CmpIPredicate.ule, value, top)
        clamped = arith.minui(value, top)
    else:
        zero = scalar(value.type, 0)
        if fits:
            inside = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, value, zero),
                                arith.cmpi(arith.CmpIPredicate.sle, value, top))
        clamped = arith.minsi(arith.maxsi(value, zero), top)
    return arith.index_cast(ir.IndexType.get(), clamped), inside


def _positions(attrs: dict, names: dict[str, str], operand: ir.Value, indices: ir.Value,
               coords: Sequence[ir.Value], sizes: Sequence[int],
               fits: bool) -> tuple[list[ir.Value], ir.Value | None]:
    """The operand position of the result (updates) element at ``coords`` and, if ``fits``,
    whether its window's start fitted (None when there are no start indices)."""
    shape = ir.RankedTensorType(operand.type).shape
    window_dims = attrs[names["window_dims"]]
    ivd = attrs["index_vector_dim"]
    batch = [c for d, c in enumerate(coords) if d not in window_dims]
    index = ir.IndexType.get()
    starts: list[ir.Value | None] = [None] * len(shape)
    inside = None
    for k, d in enumerate(attrs[names["start_map"]]):
        at = batch[:ivd] + [arith.constant(index, k)] + batch[ivd:] \
            if ivd < ir.RankedTensorType(indices.type).rank else batch
        starts[d], ok = _start(tensor.extract(indices, at), shape[d] - sizes[d], fits)
        inside = ok if inside is None else arith.andi(inside, ok)
    for a, b in zip(attrs[names["operand_batching"]], attrs[names["indices_batching"]], strict=True):
        starts[a] = batch[b if b < ivd else b - 1]
    window_operand_dims = [d for d in range(len(shape))
                           if d not in (*attrs[names["inserted"]], *attrs[names["operand_batching"]])]
    for d, od in zip(window_dims, window_operand_dims, strict=True):
        starts[od] = coords[d] if starts[od] is None else arith.addi(starts[od], coords[d])
    return [arith.constant(index, 0) if p is None else p for p in starts], inside


_GATHER_NAMES = {"window_dims": "offset_dims", "start_map": "start_index_map",
                 "inserted": "collapsed_slice_dims", "operand_batching": "operand_batching_dims",
                 "indices_batching": "start_indices_batching_dims"}
_SCATTER_NAMES = {"window_dims": "update_window_dims", "start_map": "scatter_dims_to_operand_dims",
                  "inserted": "inserted_window_dims", "operand_batching": "input_batching_dims",
                  "indices_batching": "scatter_indices_batching_dims"}


def _fill(t: ir.Type) -> ir.Value:
    """JAX's default gather fill value of element type ``t`` (NaN + 0i for complex)."""
    if is_float(t) or is_complex(t):
        return scalar(t, float("nan"))
    bits = width(t)
    if is_bool(t):
        return scalar(t, 1)
    return scalar(t, (1 << bits) - 1 if is_unsigned(t) else -(1 << (bits - 1)))


def _gather(op: ir.Operation) -> ir.Value:
    operand, indices = op.operands
    attrs = read_attributes(op)
    result = ir.RankedTensorType(op.results[0].type)
    t = result.element_type
    if is_bool(t):  # read from an i8 copy (fused into its producer), never from an i1 buffer
        i8 = ir.IntegerType.get_signless(8)
        operand = _retyped(operand, i8, lambda x: arith.extui(i8, x))

    def body() -> ir.Value:
        coords = [linalg.IndexOp(d).result for d in range(result.rank)]
        positions, fits = _positions(attrs, _GATHER_NAMES, operand, indices, coords, attrs["slice_sizes"],
                                     attrs["mode"] == "fill")
        value = tensor.extract(operand, positions)
        value = arith.trunci(t, value) if is_bool(t) else value
        if fits is None:
            return value
        return arith.select(fits, value, _fill(t))

    return generic([], result, body)


_BOOL_COMBINERS: dict[str, Body] = {"scatter_add": arith.ori, "scatter_mul": arith.andi,
                                    "scatter_max": arith.ori, "scatter_min": arith.andi}
_COMBINERS = {"scatter_add": "sum", "scatter_mul": "prod", "scatter_max": "max", "scatter_min": "min"}


def _retyped(value: ir.Value, t: ir.Type, cast: Body) -> ir.Value:
    shape = ir.RankedTensorType(value.type).shape
    return generic([value], ir.RankedTensorType.get(shape, t), cast)


def _scatter(name: str) -> Rule:
    def rule(op: ir.Operation) -> ir.Value:
        operand, indices, updates = op.operands
        attrs = read_attributes(op)
        source = ir.RankedTensorType(operand.type)
        update_shape = list(ir.RankedTensorType(updates.type).shape)
        if 0 in update_shape or 0 in source.shape:
            return operand
        boolean = is_bool(source.element_type)
        if boolean:
            i8 = ir.IntegerType.get_signless(8)
            operand, updates = (_retyped(v, i8, lambda x: arith.extui(i8, x)) for v in (operand, updates))
        combine = None
        if name != "scatter":
            combine = _BOOL_COMBINERS[name] if boolean else MONOIDS[_COMBINERS[name]][0]
        sizes = [1] * source.rank
        window_operand_dims = [d for d in range(source.rank)
                               if d not in (*attrs["inserted_window_dims"], *attrs["input_batching_dims"])]
        for d, od in zip(attrs["update_window_dims"], window_operand_dims, strict=True):
            sizes[od] = update_shape[d]

        def body(coords: list[ir.Value], acc: ir.Value) -> ir.Value:
            positions, fits = _positions(attrs, _SCATTER_NAMES, operand, indices, coords, sizes,
                                         attrs["mode"] != "clip")
            new = tensor.extract(updates, coords)
            if combine is None and fits is None:
                return tensor.insert(new, acc, positions)
            old = tensor.extract(acc, positions)
            if combine is not None:  # (current, update), XLA's order: complex max/min pick the update on NaN
                new = combine(old, new)
            if fits is not None:
                new = arith.select(fits, new, old)
            return tensor.insert(new, acc, positions)

        out = loop_nest(update_shape, operand, body)
        if boolean:
            out = _retyped(out, source.element_type, lambda x: arith.trunci(source.element_type, x))
        return out

    return rule


RULES: dict[str, Rule] = {"gather": _gather, **{name: _scatter(name) for name in (
    "scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max")}}
