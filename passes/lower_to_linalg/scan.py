"""Rules for ops that carry state along one dimension: argmax/argmin, cumulative ops.

argmax/argmin are one linalg.generic reducing `axis` into two outputs, the extreme value
and its index, from (-inf / the lowest integer, 0) for max and (+inf / the highest, 0) for
min. An element replaces the pair when it is strictly better, or equal (NaN counting as
equal to NaN and better than any number) at a lower index: the first index wins whatever
order the reduction runs in, the first NaN is the answer, and -0.0 ties with +0.0.

cum{sum,prod,max,min} are a nest of scf.for loops over the operand (the last dimension
innermost; `axis` visited backwards for `reverse`) carrying the result tensor, which
starts as a linalg.fill of the identity (-0.0 for float sums, so that -0.0 survives):
each element is combine(result at the previous index along `axis`, operand), read and
written with tensor.extract / tensor.insert, so bufferization stores in place with no
copy; the first index reads its own identity. The combination is in the operand's own type;
max/min are the NaN-propagating, -0.0 < +0.0 bodies of reduce_max / reduce_min. A float
cumsum longer than 256 elements runs in blocks of 256 (each started afresh), adds the
running total of the blocks before each block (a cumsum of the blocks' totals, blocked the
same way) to its elements: its error, like XLA's, does not grow with the axis (a sequential
f32 cumsum of 2^24 elements was 200x less accurate than jax's).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, tensor

from mlax.dialect.opviews import linalg
from mlax.passes.lower_to_linalg.common import (
    Body,
    Rule,
    generic,
    is_bool,
    is_float,
    is_unsigned,
    loop_nest,
    scalar,
    width,
)
from mlax.passes.lower_to_linalg.reductions import MONOIDS

_FLOAT_BETTER = {"max": arith.CmpFPredicate.OGT, "min": arith.CmpFPredicate.OLT}
_INT_BETTER = {"max": "sgt", "min": "slt"}
_UNSIGNED_BETTER = {"max": "ugt", "min": "ult"}


def _worst(t: ir.Type, kind: str) -> int | float:
    """The value of type ``t`` every element is at least as good as (-inf / the lowest
    integer for max)."""
    if is_float(t):
        return float("-inf") if kind == "max" else float("inf")
    bits = width(t)
    if is_unsigned(t) or is_bool(t):
        return 0 if kind == "max" else (1 << bits) - 1
    return -(1 << (bits - 1)) if kind == "max" else (1 << (bits - 1)) - 1


def _replaces(kind: str, x: ir.Value, i: ir.Value, best: ir.Value, at: ir.Value) -> ir.Value:
    """Whether (x, i) replaces the pair (best, at): better, or as good at a lower index."""
    if is_float(x.type):
        x_nan = arith.cmpf(arith.CmpFPredicate.UNO, x, x)
        best_nan = arith.cmpf(arith.CmpFPredicate.UNO, best, best)
        better = arith.ori(arith.cmpf(_FLOAT_BETTER[kind], x, best),
                           arith.andi(x_nan, arith.xori(best_nan, scalar(x_nan.type, 1))))
        equal = arith.ori(arith.cmpf(arith.CmpFPredicate.OEQ, x, best), arith.andi(x_nan, best_nan))
    else:
        table = _UNSIGNED_BETTER if is_unsigned(x.type) else _INT_BETTER
        better = arith.cmpi(getattr(arith.CmpIPredicate, table[kind]), x, best)
        equal = arith.cmpi(arith.CmpIPredicate.eq, x, best)
    return arith.ori(better, arith.andi(equal, arith.cmpi(arith.CmpIPredicate.slt, i, at)))


def _arg_extreme(kind: str) -> Rule:
    def rule(op: ir.Operation) -> ir.Value:
        (operand,) = op.operands
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        source = ir.RankedTensorType(operand.type)
        result = ir.RankedTensorType(op.results[0].type)
        rank, t = source.rank, source.element_type
        # Booleans compare as i8 0 / 1 (an i1 output buffer does not lower to LLVM). Indices
        # count in the result type where the axis fits its signed range, else in i64 and wrap.
        value_type = ir.IntegerType.get_signless(8) if is_bool(t) else t
        index_type = result.element_type
        if source.shape[axis] - 1 >= 1 << (width(index_type) - 1):
            index_type = ir.IntegerType.get_signless(64)
        inits = [linalg.fill(scalar(u, v), outs=[tensor.empty(result.shape, u)])
                 for u, v in ((value_type, _worst(t, kind)), (index_type, 0))]
        kept = [ir.AffineDimExpr.get(d) for d in range(rank) if d != axis]
        maps = [ir.AffineMap.get_identity(rank)] + [ir.AffineMap.get(rank, 0, kept)] * 2
        iterators = [ir.Attribute.parse(f"#linalg.iterator_type<{'reduction' if d == axis else 'parallel'}>")
                     for d in range(rank)]
        reduce = linalg.GenericOp([init.type for init in inits], [operand], inits,
                                  ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                                  ir.ArrayAttr.get(iterators))
        block = reduce.regions[0].blocks.append(t, value_type, index_type)
        with ir.InsertionPoint(block):
            x, best, at = block.arguments
            x = arith.extui(value_type, x) if value_type != t else x
            i = arith.index_cast(index_type, linalg.IndexOp(axis).result)
            take = _replaces(kind, x, i, best, at)
            linalg.yield_([arith.select(take, x, best), arith.select(take, i, at)])
        index = reduce.results[1]
        if index_type == result.element_type:
            return index
        return generic([index], result, lambda i: arith.trunci(result.element_type, i))

    return rule


def _identity(t: ir.Type, kind: str) -> int | float:
    """The start of a running ``kind``: -0.0 for float sums (-0.0 + x is x, even for x = -0.0)."""
    return -0.0 if kind == "sum" and is_float(t) else MONOIDS[kind][1](t)


_SCAN_BLOCK = 256
"""The longest run a float cumsum accumulates in a row; a longer axis is scanned in blocks."""


def _running(kind: str, operand: ir.Value, axis: int, reverse: bool, block: int) -> ir.Value:
    """The sequential running ``kind`` along ``axis``, started afresh every ``block`` elements
    (counted from the start of the axis, whichever way it runs)."""
    combine: Body = MONOIDS[kind][0]
    t = ir.RankedTensorType(operand.type)
    shape, n = list(t.shape), t.shape[axis]
    index = ir.IndexType.get()
    one, end = arith.constant(index, 1), arith.constant(index, n - 1 if reverse else 0)
    start = linalg.fill(scalar(t.element_type, _identity(t.element_type, kind)),
                        outs=[tensor.empty(shape, t.element_type)])

    def body(indices: list[ir.Value], acc: ir.Value) -> ir.Value:
        # Visit n-1 .. 0 for reverse. The first element of the axis (of a block) reads its own
        # position, which still holds the identity.
        here = arith.subi(end, indices[axis]) if reverse else indices[axis]
        before = (arith.addi if reverse else arith.subi)(here, one)
        if block >= n:
            before = (arith.minsi if reverse else arith.maxsi)(before, end)
        else:
            size, zero = arith.constant(index, block), arith.constant(index, 0)
            first = arith.cmpi(arith.CmpIPredicate.eq, arith.remui(before if reverse else here, size), zero)
            if reverse:
                first = arith.ori(arith.cmpi(arith.CmpIPredicate.eq, here, end), first)
            before = arith.select(first, here, before)
        at, previous = list(indices), list(indices)
        at[axis], previous[axis] = here, before
        value = combine(tensor.extract(acc, previous), tensor.extract(operand, at))
        return tensor.insert(value, acc, at)

    return loop_nest(shape, start, body)


def _with_axis(t: ir.RankedTensorType, axis: int, size: int) -> ir.RankedTensorType:
    shape = list(t.shape)
    shape[axis] = size
    return ir.RankedTensorType.get(shape, t.element_type)


def _blocked_sum(operand: ir.Value, axis: int, reverse: bool) -> ir.Value:
    """A float cumsum whose rounding error does not grow with the axis, as XLA's: running sums
    within blocks, the blocks' totals summed the same way (recursively), and each block's
    offset (the sum of the blocks before it) added to its elements."""
    t = ir.RankedTensorType(operand.type)
    n, rank = t.shape[axis], t.rank
    if n <= _SCAN_BLOCK:
        return _running("sum", operand, axis, reverse, n)
    local = _running("sum", operand, axis, reverse, _SCAN_BLOCK)
    blocks = -(-n // _SCAN_BLOCK)
    index = ir.IndexType.get()

    def block_total() -> ir.Value:  # the running sum at the block's last element
        indices = [linalg.IndexOp(d).result for d in range(rank)]
        k = indices[axis]
        if reverse:
            indices[axis] = arith.muli(k, arith.constant(index, _SCAN_BLOCK))
        else:
            indices[axis] = arith.minsi(arith.addi(arith.muli(k, arith.constant(index, _SCAN_BLOCK)),
                                                   arith.constant(index, _SCAN_BLOCK - 1)),
                                        arith.constant(index, n - 1))
        return tensor.extract(local, indices)

    totals = generic([], _with_axis(t, axis, blocks), block_total)
    running_totals = _blocked_sum(totals, axis, reverse)

    def block_offset() -> ir.Value:  # the running total of the blocks before (or after) it
        indices = [linalg.IndexOp(d).result for d in range(rank)]
        k = indices[axis]
        edge = arith.constant(index, blocks - 1 if reverse else 0)
        indices[axis] = arith.select(arith.cmpi(arith.CmpIPredicate.eq, k, edge), k,
                                     (arith.addi if reverse else arith.subi)(k, arith.constant(index, 1)))
        value = tensor.extract(running_totals, indices)
        return arith.select(arith.cmpi(arith.CmpIPredicate.eq, k, edge),
                            scalar(t.element_type, -0.0), value)

    offsets = generic([], _with_axis(t, axis, blocks), block_offset)
    exprs = [ir.AffineExpr.get_floor_div(ir.AffineDimExpr.get(d), _SCAN_BLOCK) if d == axis
             else ir.AffineDimExpr.get(d) for d in range(rank)]
    return generic([local, offsets], t, arith.addf,
                   maps=[ir.AffineMap.get_identity(rank), ir.AffineMap.get(rank, 0, exprs)])


def _cumulative(kind: str) -> Rule:
    def rule(op: ir.Operation) -> ir.Value:
        (operand,) = op.operands
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        reverse = bool(ir.IntegerAttr(op.attributes["reverse"]).value)
        t = ir.RankedTensorType(operand.type)
        shape, n = list(t.shape), t.shape[axis]
        if n <= 1 or 0 in shape:
            return operand
        if kind == "sum" and is_float(t.element_type):
            return _blocked_sum(operand, axis, reverse)
        return _running(kind, operand, axis, reverse, n)

    return rule


RULES: dict[str, Rule] = {
    **{f"arg{kind}": _arg_extreme(kind) for kind in ("max", "min")},
    **{f"cum{kind}": _cumulative(kind) for kind in ("sum", "prod", "max", "min")},
}
