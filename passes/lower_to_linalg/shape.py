"""Rules for the shape ops: transpose, reshape, rev, slice, concatenate, pad.

transpose and rev are one linalg.generic each whose input map does the indexing (a
permutation, `n - 1 - d`); slice is a generic over the result that reads the operand with
tensor.extract at `start + stride * i` (as an input map, a dimension with start 0 and
stride 1 would be a bare `d` of a longer operand dimension, from which linalg infers the
loop bound); reshape is one tensor.collapse_shape /
expand_shape where it merges or splits consecutive dimensions, else a collapse to 1-D and
an expand (rank 0 goes through `tensor<1xT>`); concatenate is a generic that
extracts from lhs or rhs by index, pad one that extracts from the operand or yields
the padding value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mlir import ir
from mlir.dialects import arith, tensor

from mlax.dialect.opviews import linalg
from mlax.passes.lower_to_linalg.common import Rule, generic, i64_array, reassociation
from mlax.passes.lower_to_linalg.contraction import transposed_product


def _gather(exprs: Callable[[ir.Operation, int], Sequence[ir.AffineExpr]]) -> Rule:
    """A rule copying the operand into the result through the input map ``exprs(op, rank)``."""

    def rule(op: ir.Operation) -> ir.Value:
        result = ir.RankedTensorType(op.results[0].type)
        operand_map = ir.AffineMap.get(result.rank, 0, list(exprs(op, result.rank)))
        return generic([op.operands[0]], result, lambda x: x, maps=[operand_map])

    return rule


def _transpose_exprs(op: ir.Operation, rank: int) -> list[ir.AffineExpr]:
    """Operand dimension permutation[k] is read at result dimension k."""
    permutation = i64_array(op, "permutation")
    return [ir.AffineDimExpr.get(permutation.index(m)) for m in range(rank)]


def _transpose(op: ir.Operation) -> ir.Value:
    """A transpose of a product is the product of the exchanged operands, else a copy."""
    swapped = transposed_product(op.operands[0], i64_array(op, "permutation"))
    return swapped if swapped is not None else _gather(_transpose_exprs)(op)


def _rev_exprs(op: ir.Operation, rank: int) -> list[ir.AffineExpr]:
    dims, shape = set(i64_array(op, "dimensions")), ir.RankedTensorType(op.operands[0].type).shape
    return [ir.AffineConstantExpr.get(shape[d] - 1) - ir.AffineDimExpr.get(d) if d in dims
            else ir.AffineDimExpr.get(d) for d in range(rank)]


def _slice(op: ir.Operation) -> ir.Value:
    (operand,) = op.operands
    starts, strides = i64_array(op, "start_indices"), i64_array(op, "strides")
    result = ir.RankedTensorType(op.results[0].type)

    def body() -> ir.Value:
        index = ir.IndexType.get()
        at = [arith.addi(arith.muli(linalg.IndexOp(d).result, arith.constant(index, stride)),
                         arith.constant(index, start))
              for d, (start, stride) in enumerate(zip(starts, strides, strict=True))]
        return tensor.extract(operand, at)

    return generic([], result, body)


def _groups(fine: Sequence[int], coarse: Sequence[int]) -> list[list[int]] | None:
    """Consecutive dimensions of ``fine`` whose sizes multiply to each size of ``coarse``
    (trailing size-1 dimensions join the last group), or None when ``coarse`` is no such
    merge (or has zero-size or no dimensions: those go through 1-D)."""
    if not coarse or 0 in fine or 0 in coarse:
        return None
    groups, i = [], 0
    for size in coarse:
        if i == len(fine):
            return None
        group, product = [i], fine[i]
        i += 1
        while product < size and i < len(fine):
            group.append(i)
            product *= fine[i]
            i += 1
        if product != size:
            return None
        groups.append(group)
    if any(n != 1 for n in fine[i:]):
        return None
    groups[-1].extend(range(i, len(fine)))
    return groups


def _expand(value: ir.Value, result: ir.RankedTensorType, groups: Sequence[Sequence[int]]) -> ir.Value:
    return tensor.expand_shape(result, value, reassociation(groups), [], list(result.shape))


def _to_1d(value: ir.Value) -> ir.Value:
    t = ir.RankedTensorType(value.type)
    size = 1
    for d in t.shape:
        size *= d
    flat = ir.RankedTensorType.get([size], t.element_type)
    if t.rank == 1:
        return value
    if t.rank == 0:
        return _expand(value, flat, [])
    return tensor.collapse_shape(flat, value, reassociation([range(t.rank)]))


def _reshape(op: ir.Operation) -> ir.Value:
    """One collapse_shape or expand_shape where the reshape is a pure merge or split of
    consecutive dimensions, else a collapse to 1-D and an expand to the result."""
    (operand,) = op.operands
    source, result = ir.RankedTensorType(operand.type), ir.RankedTensorType(op.results[0].type)
    if source.shape == result.shape:
        return operand
    if source.rank > result.rank and (groups := _groups(source.shape, result.shape)):
        return tensor.collapse_shape(result, operand, reassociation(groups))
    if result.rank > source.rank and (groups := _groups(result.shape, source.shape)):
        return _expand(operand, result, groups)
    flat = _to_1d(operand)
    if result.rank == 1:
        return flat
    if result.rank == 0:
        return tensor.collapse_shape(result, flat, reassociation([]))
    return _expand(flat, result, [range(result.rank)])


def _concatenate(op: ir.Operation) -> ir.Value:
    """A generic reading lhs below lhs.shape[dimension] and rhs from there (tensor.extract at
    clamped indices, so both reads are in bounds, then a select); an operand empty along
    `dimension` leaves the other one."""
    dimension = ir.IntegerAttr(op.attributes["dimension"]).value
    lhs, rhs = op.operands
    split = ir.RankedTensorType(lhs.type).shape[dimension]
    rhs_size = ir.RankedTensorType(rhs.type).shape[dimension]
    if split == 0 or rhs_size == 0:
        return rhs if split == 0 else lhs
    result = ir.RankedTensorType(op.results[0].type)

    def body() -> ir.Value:
        index = ir.IndexType.get()
        at = [linalg.IndexOp(d).result for d in range(result.rank)]
        bound = arith.constant(index, split)
        in_lhs = arith.cmpi(arith.CmpIPredicate.slt, at[dimension], bound)
        lhs_at, rhs_at = list(at), list(at)
        lhs_at[dimension] = arith.minsi(at[dimension], arith.constant(index, split - 1))
        rhs_at[dimension] = arith.maxsi(arith.subi(at[dimension], bound), arith.constant(index, 0))
        return arith.select(in_lhs, tensor.extract(lhs, lhs_at), tensor.extract(rhs, rhs_at))

    return generic([], result, body)


def _pad(op: ir.Operation) -> ir.Value:
    """A generic over the result: per dimension, j = i - low is an operand element when
    0 <= j, j % (interior + 1) == 0 and j / (interior + 1) < n; else the padding value.
    The operand is read at clamped indices (always in bounds), so negative edge padding
    needs no crop. An empty operand gives all padding."""
    operand, value = op.operands
    result = ir.RankedTensorType(op.results[0].type)
    shape = ir.RankedTensorType(operand.type).shape
    lows, interiors = i64_array(op, "edge_padding_low"), i64_array(op, "interior_padding")
    if 0 in shape:
        return generic([value], result, lambda pad: pad)

    def body(pad: ir.Value) -> ir.Value:
        index = ir.IndexType.get()

        def const(n: int) -> ir.Value:
            return arith.constant(index, n)

        inside, at = None, []
        for d, (n, low, interior) in enumerate(zip(shape, lows, interiors, strict=True)):
            j = arith.subi(linalg.IndexOp(d).result, const(low))
            safe = arith.maxsi(j, const(0))
            q = arith.divsi(safe, const(interior + 1))
            ok = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, j, const(0)),
                            arith.cmpi(arith.CmpIPredicate.slt, q, const(n)))
            if interior:
                on_grid = arith.cmpi(arith.CmpIPredicate.eq, arith.remsi(safe, const(interior + 1)), const(0))
                ok = arith.andi(ok, on_grid)
            inside = ok if inside is None else arith.andi(inside, ok)
            at.append(arith.minsi(q, const(n - 1)))
        if inside is None:  # rank 0: the operand itself
            return tensor.extract(operand, [])
        return arith.select(inside, tensor.extract(operand, at), pad)

    return generic([value], result, body)


RULES: dict[str, Rule] = {
    "transpose": _transpose,
    "rev": _gather(_rev_exprs),
    "slice": _slice,
    "reshape": _reshape,
    "concatenate": _concatenate,
    "pad": _pad,
}
