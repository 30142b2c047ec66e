"""The sharding rule of every mlax op, keyed by op name (`mlax-partition`'s rule table).

A rule reads an op's attributes and its operand and result shapes and returns its factor
mapping (factors.py), or None where this instance has no useful one (a non-splat constant, a
bitcast that changes the shape): then, as for every op in `FALLBACK`, the partitioner
gathers the operands whole, runs the op on every device and slices the result to its
sharding, which is always correct and only slow. The op's ``sharding`` trait (dialect/registry.py)
states its factor kind: ``"pointwise"`` ops (every elementwise op: select, clamp, compare,
convert included) get the `elementwise` rule and ``"fallback"`` ops are `FALLBACK`, both read
from the op table. The other families, registered next to each other: broadcast_in_dim, reshape, transpose,
reductions (a sharded reduced dimension: local reduce + psum/pmax/pmin), dot_general,
dimension-wise ops (slice, pad, concatenate, rev, dynamic slices, windows, sorts, top_k,
cumulative ops: a dimension they only pass through may be sharded, one they cut, pad, reorder
or scan must be whole), iota and constant (made locally), convolutions (batch, output
feature, input feature). `UNSUPPORTED` names the ops `mlax-partition` refuses, with why;
`SPECIAL` the ones the pass handles itself. tests/passes/test_partition_rules.py checks that
every op of the dialect is in exactly one of these.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mlax.dialect import OPS
from mlax.passes.partition.factors import MAX, MIN, PASS, REPLICATED, SUM, OpRule, RuleBuilder

Shape = tuple[int, ...]
# (attributes, operand shapes, result shapes) -> the factor mapping, or None: fall back
Rule = Callable[[dict[str, Any], Sequence[Shape], Sequence[Shape]], "OpRule | None"]

RULES: dict[str, Rule] = {}


def register(names: Sequence[str] | str, rule: Rule) -> None:
    for name in [names] if isinstance(names, str) else names:
        if name in RULES:
            raise ValueError(f"sharding rule for mlax.{name} registered twice")
        RULES[name] = rule


def _with_shape(attr: str) -> Callable[[dict[str, Any], list[Shape]], dict[str, Any]]:
    """Localize an attribute that spells the result shape (reshape, broadcast_in_dim, iota)."""
    return lambda attrs, results: {**attrs, attr: tuple(results[0])}


# --- pointwise ----------------------------------------------------------------------------------


def elementwise(attrs: dict[str, Any], operands: Sequence[Shape], results: Sequence[Shape]) -> OpRule:
    """The ``"pointwise"`` sharding kind: one factor per result dimension; operands of the
    result's rank share them, rank-0 operands (a select's scalar predicate, a clamp's scalar
    bounds) have none."""
    (shape,) = results
    b = RuleBuilder(len(operands), 1)
    factors = [b.factor(n) for n in shape]
    for f in factors:
        b.result(0, f)
    for i, operand in enumerate(operands):
        if len(operand) == len(shape):
            for f in factors:
                b.operand(i, f)
    return b.build()


def _same_shape_unless_bitcast(attrs: dict[str, Any], operands: Sequence[Shape],
                               results: Sequence[Shape]) -> OpRule | None:
    return elementwise(attrs, operands, results) if operands[0] == results[0] else None


register([name for name, op in OPS.items() if op.sharding == "pointwise"], elementwise)
register("bitcast_convert", _same_shape_unless_bitcast)


# --- broadcast_in_dim, reshape, transpose ---------------------------------------------------------


def _broadcast_in_dim(attrs: dict[str, Any], operands: Sequence[Shape], results: Sequence[Shape]) -> OpRule:
    """Result dimensions are factors; an operand dimension shares its result dimension's
    factor unless it is a size-1 dimension being broadcast."""
    (operand,), (shape,) = operands, results
    b = RuleBuilder(1, 1)
    factors = [b.factor(n) for n in shape]
    for f in factors:
        b.result(0, f)
    for n, d in zip(operand, attrs["broadcast_dimensions"], strict=True):
        b.operand(0, factors[d] if n == shape[d] else b.factor(n, REPLICATED))
    return b.build(_with_shape("shape"))


def _reshape(attrs: dict[str, Any], operands: Sequence[Shape], results: Sequence[Shape]) -> OpRule | None:
    """Factors are the common mixed-radix digits of the two shapes (major first, by gcd):
    ``8x4 -> 32`` has factors 8 and 4, both in the one result dimension, so a sharded major
    dimension stays sharded across a merge or a split. Where the shapes share no further
    digit (``6x4 -> 4x6`` after the common 2), the remaining parts are replicated factors of
    their own tensor."""
    (source,), (target,) = operands, results
    if 0 in source:
        return None
    b = RuleBuilder(1, 1)
    ins: list[list[int]] = [[] for _ in source]
    outs: list[list[int]] = [[] for _ in target]
    i = j = 0
    left_in = source[0] if source else 1
    left_out = target[0] if target else 1
    while i < len(source) or j < len(target):
        if i < len(source) and left_in == 1:
            if not ins[i]:
                ins[i].append(b.factor(1))
            i += 1
            left_in = source[i] if i < len(source) else 1
            continue
        if j < len(target) and left_out == 1:
            if not outs[j]:
                outs[j].append(b.factor(1))
            j += 1
            left_out = target[j] if j < len(target) else 1
            continue
        g = int(np.gcd(left_in, left_out))
        if i >= len(source) or j >= len(target) or g == 1:
            break
        f = b.factor(g)
        ins[i].append(f)
        outs[j].append(f)
        left_in //= g
        left_out //= g
    for dims, shape, start, left in ((ins, source, i, left_in), (outs, target, j, left_out)):
        for d in range(start, len(shape)):
            rest = left if d == start else shape[d]
            if rest > 1 or not dims[d]:
                dims[d].append(b.factor(rest, REPLICATED))
    for factors in ins:
        b.operand(0, *factors)
    for factors in outs:
        b.result(0, *factors)
    return b.build(_with_shape("shape"))


def _transpose(attrs: dict[str, Any], operands: Sequence[Shape], results: Sequence[Shape]) -> OpRule:
    (operand,) = operands
    b = RuleBuilder(1, 1)
    factors = [b.factor(n) for n in operand]
    for f in factors:
        b.operand(0, f)
    for d in attrs["permutation"]:
        b.result(0, factors[d])
    return b.build()


register("broadcast_in_dim", _broadcast_in_dim)
register("reshape", _reshape)
register("transpose", _transpose)


# --- reductions and dot_general ------------------------------------------------------------------


def _reduction(kind: str, axes_attr: str) -> Rule:
    """Reduced dimensions are ``kind`` factors (SUM/MAX/MIN: a psum/pmax/pmin completes a
    sharded one; REPLICATED where no collective combines partial results)."""
    def rule(attrs: dict[str, Any], operands: Sequence[Shape], results: Sequence[Shape]) -> OpRule:
        (operand,) = operands
        reduced = attrs[axes_attr]
        reduced = set(reduced) if isinstance(reduced, tuple) else {reduced}
        b = RuleBuilder(1, 1)
        for d, n in enumerate(operand):
            f = b.factor(n, kind if d in reduced else PASS)
            b.operand(0, f)
            if d not in reduced:
                b.result(0, f)
        return b.build()
    return rule


register("reduce_sum", _reduction(SUM, "dimensions"))
register("reduce_max", _reduction(MAX, "dimensions"))
register("reduce_min", _reduction(MIN, "dimensions"))
register("reduce_or", _reduction(MAX, "dimensions"))  # booleans: or is max, and is min
register("reduce_and", _reduction(MIN, "dimensions"))
register("reduce_prod", _reduction(REPLICATED, "dimensions"))  # no collective multiplies
register(("argmax", "argmin"), _reduction(REPLICATED, "axis"))


def _dot_general(attrs: dict[str, Any], operands: Sequence[Shape], results: Sequence[Shape]) -> OpRule:
    """Batch factors (both operands and the result), contracting factors (SUM: sharded, each
    device holds a partial product), free factors of either side; result order batch, lhs
    free, rhs free."""
    lhs, rhs = operands
    b = RuleBuilder(2, 1)
    lhs_f: dict[int, int] = {}
    rhs_f: dict[int, int] = {}
    batch = []
    for l, r in zip(attrs["lhs_batch_dimensions"], attrs["rhs_batch_dimensions"], strict=True):
        lhs_f[l] = rhs_f[r] = b.factor(lhs[l])
        batch.append(lhs_f[l])
    for l, r in zip(attrs["lhs_contracting_dimensions"], attrs["rhs_contracting_dimensions"], strict=True):
        lhs_f[l] = rhs_f[r] = b.factor(lhs[l], SUM)
    free = []
    for shape, mapping in ((lhs, lhs_f), (rhs, rhs_f)):
        for d, n in enumerate(shape):
            if d not in mapping:
                mapping[d] = b.factor(n)
                free.append(mapping[d])
    for i, (shape, mapping) in enumerate(((lhs, lhs_f), (rhs, rhs_f))):
        for d in range(len(shape)):
            b.operand(i, mapping[d])
    for f in batch + free:
        b.result(0, f)
    return b.build()


register("dot_general", _dot_general)


# --- dimension-wise ops: a dimension passed through whole may be sharded -------------------------


def dimwise(operands: Sequence[Shape], results: Sequence[Shape], kept: Sequence[bool],
            ranked: Sequence[int], localize: Callable | None = None) -> OpRule:
    """Operands ``ranked`` (the others are rank-0 scalars) and every result have one
    dimension per entry of ``kept``: a kept dimension is one PASS factor shared by all of
    them; another is REPLICATED (one factor per distinct size, so same-size dimensions of a
    sort or a rev stay one factor)."""
    b = RuleBuilder(len(operands), len(results))
    tensors = [(b.operand, i, operands[i]) for i in ranked]
    tensors += [(b.result, i, s) for i, s in enumerate(results)]
    for d, keep in enumerate(kept):
        shared: dict[int, int] = {}
        for add, i, shape in tensors:
            n = shape[d]
            if n not in shared:
                shared[n] = b.factor(n, PASS if keep else REPLICATED)
            add(i, shared[n])
    return b.build(localize)


def _kept_attr(attr: str, kept: Sequence[bool]) -> Callable[[dict[str, Any], list[Shape]], dict[str, Any]]:
    """Localize ``attr`` (slice limits, slice sizes) on the kept dimensions to the local size."""
    def localize(attrs: dict[str, Any], results: list[Shape]) -> dict[str, Any]:
        pairs = enumerate(zip(attrs[attr], kept, strict=True))
        values = tuple(results[0][d] if k else v for d, (v, k) in pairs)
        return {**attrs, attr: values}
    return localize


def _slice(attrs: dict[str, Any], operands: Sequence[Shape], results: Sequence[Shape]) -> OpRule:
    (shape,) = operands
    kept = [s == 0 and lim == n and st == 1 for s, lim, st, n in
            zip(attrs["start_indices"], attrs["limit_indices"], attrs["strides"], shape, strict=True)]
    return dimwise(operands, results, kept, [0], _kept_attr("limit_indices", kept))


def _dynamic_slice(attrs: dict[str, Any], operands: Sequence[Shape], results: Sequence[Shape]) -> OpRule:
    kept = [n == size for n, size in zip(operands[0], attrs["slice_sizes"], strict=True)]
    return dimwise(operands, results, kept, [0], _kept_attr("slice_sizes", kept))


def _dynamic_update_slice(attrs: dict[str, Any], operands: Sequence[Shape],
                          results: Sequence[Shape]) -> OpRule:
    kept = [n == u for n, u in zip(operands[0], operands[1], strict=True)]
    return dimwise(operands, results, kept, [0, 1])


def _concatenate(attrs: dict[str, Any], operands: Sequence[Shape], results: Sequence[Shape]) -> OpRule:
    kept = [d != attrs["dimension"] for d in range(len(results[0]))]
    return dimwise(operands, results, kept, [0, 1])


def _pad(attrs: dict[str, Any], operands: Sequence[Shape], results: Sequence[Shape]) -> OpRule:
    pads = zip(attrs["edge_padding_low"], attrs["edge_padding_high"], attrs["interior_padding"], strict=True)
    kept = [lo == hi == mid == 0 for lo, hi, mid in pads]
    return dimwise(operands, results, kept, [0])


def _along(attr: str, *, last: bool = False) -> Rule:
    """Ops that work along some dimensions (rev, cumulative ops, sorts, top_k): those are
    whole, the others pass through."""
    def rule(attrs: dict[str, Any], operands: Sequence[Shape], results: Sequence[Shape]) -> OpRule:
        rank = len(results[0])
        along = {rank - 1} if last else set(attrs[attr]) if isinstance(attrs[attr], tuple) else {attrs[attr]}
        return dimwise(operands, results, [d not in along for d in range(rank)], range(len(operands)))
    return rule


def _reduce_window(attrs: dict[str, Any], operands: Sequence[Shape], results: Sequence[Shape]) -> OpRule:
    pads = attrs["padding"]
    kept = [w == s == base == dil == 1 and pads[2 * d] == pads[2 * d + 1] == 0 for d, (w, s, base, dil) in
            enumerate(zip(attrs["window_dimensions"], attrs["window_strides"], attrs["base_dilation"],
                          attrs["window_dilation"], strict=True))]
    return dimwise(operands, results, kept, [0])


register("slice", _slice)
register("dynamic_slice", _dynamic_slice)
register("dynamic_update_slice", _dynamic_update_slice)
register("concatenate", _concatenate)
register("pad", _pad)
register("rev", _along("dimensions"))
register(("cumsum", "cumprod", "cummax", "cummin"), _along("axis"))
register(("sort_permutation", "apply_permutation"), _along("dimension"))
register("top_k", _along("", last=True))
register(("reduce_window_sum", "reduce_window_max", "reduce_window_min"), _reduce_window)


# --- values made from nothing ----------------------------------------------------------------------


def _iota(attrs: dict[str, Any], operands: Sequence[Shape], results: Sequence[Shape]) -> OpRule:
    """Dimensions other than the counted one are made locally at their local size."""
    kept = [d != attrs["dimension"] for d in range(len(results[0]))]
    return dimwise(operands, results, kept, [], _with_shape("shape"))


def _constant(attrs: dict[str, Any], operands: Sequence[Shape], results: Sequence[Shape]) -> OpRule | None:
    """A splat is made at its local shape on every device; other constants fall back (made
    whole, then sliced)."""
    value = np.asarray(attrs["value"])
    if value.size == 0 or not _one_value(value):
        return None
    scalar = np.asarray(value.flat[0], dtype=value.dtype)
    return dimwise(operands, results, [True] * value.ndim, [],
                   lambda attrs, shapes: {"value": np.broadcast_to(scalar, shapes[0])})  # a splat


def _one_value(value: np.ndarray) -> bool:
    """Whether every element is the first (NaN equal to NaN). A big splat reads back as a
    broadcast of its one value (zero strides), which answers without reading its elements."""
    if all(s == 0 or n == 1 for s, n in zip(value.strides, value.shape, strict=True)):
        return True
    first = np.broadcast_to(value.flat[0], value.shape)
    return np.array_equal(value, first, equal_nan=value.dtype.kind in "fc")


register("iota", _iota)
register("constant", _constant)


# --- convolutions ------------------------------------------------------------------------------------


def _conv(attrs: dict[str, Any], operands: Sequence[Shape], results: Sequence[Shape]) -> OpRule:
    """Batch (lhs and result), output feature (rhs and result) and, without feature or batch
    groups, input feature (lhs and rhs, a SUM factor); spatial dimensions are whole."""
    (lhs, rhs), (out,) = operands, results
    lhs_spec, rhs_spec, out_spec = attrs["lhs_spec"], attrs["rhs_spec"], attrs["out_spec"]
    plain = attrs["feature_group_count"] == 1 and attrs["batch_group_count"] == 1
    b = RuleBuilder(2, 1)
    dims: list[dict[int, int]] = [{}, {}, {}]
    if attrs["batch_group_count"] == 1:
        dims[0][lhs_spec[0]] = dims[2][out_spec[0]] = b.factor(lhs[lhs_spec[0]])
    if plain:
        dims[1][rhs_spec[0]] = dims[2][out_spec[1]] = b.factor(rhs[rhs_spec[0]])
        dims[0][lhs_spec[1]] = dims[1][rhs_spec[1]] = b.factor(lhs[lhs_spec[1]], SUM)
    for k, shape in enumerate((lhs, rhs, out)):
        for d, n in enumerate(shape):
            f = dims[k].setdefault(d, b.factor(n, REPLICATED))
            (b.result if k == 2 else b.operand)(0 if k == 2 else k, f)
    return b.build()


register("conv_general_dilated", _conv)


def _fft(attrs: dict[str, Any], operands: Sequence[Shape], results: Sequence[Shape]) -> OpRule:
    """The transformed trailing axes are whole; the leading (batch) ones pass through."""
    rank, transformed = len(results[0]), len(attrs["fft_lengths"])
    return dimwise(operands, results, [d < rank - transformed for d in range(rank)], [0])


register("fft", _fft)


# --- the rest -------------------------------------------------------------------------------------------

# The ``"fallback"`` sharding kind: gathered whole, computed on every device, sliced to the
# result's sharding.
FALLBACK = frozenset(name for name, op in OPS.items() if op.sharding == "fallback")

# Handled by the pass itself: the constraint is a reshard of its operand.
SPECIAL = frozenset({"sharding_constraint"})

_COLLECTIVE = ("a collective over named axes belongs in a shard_map body (or a vmap with axis_name, "
               "which mlax-expand-transforms resolves first); in the global program nothing names "
               "the devices it would combine")
UNSUPPORTED: dict[str, str] = {name: _COLLECTIVE for name in (
    "psum", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all", "ppermute", "axis_index")}
