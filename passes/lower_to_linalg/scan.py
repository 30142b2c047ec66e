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
copy; the first index reads its own identity. The combination is sequential and in the
operand's own type, rounding every partial result as the reference does; max/min are the
NaN-propagating, -0.0 < +0.0 bodies of reduce_max / reduce_min.
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


def _cumulative(kind: str) -> Rule:
    combine: Body = MONOIDS[kind][0]

    def rule(op: ir.Operation) -> ir.Value:
        (operand,) = op.operands
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        reverse = bool(ir.IntegerAttr(op.attributes["reverse"]).value)
        t = ir.RankedTensorType(operand.type)
        shape, n = list(t.shape), t.shape[axis]
        if n <= 1 or 0 in shape:
            return operand
        index = ir.IndexType.get()
        one, end = arith.constant(index, 1), arith.constant(index, n - 1 if reverse else 0)
        start = linalg.fill(scalar(t.element_type, _identity(t.element_type, kind)),
                            outs=[tensor.empty(shape, t.element_type)])

        def body(indices: list[ir.Value], acc: ir.Value) -> ir.Value:
            # Visit n-1 .. 0 for reverse. The previous index is clamped: the first one reads
            # its own identity.
            if reverse:
                here = arith.subi(end, indices[axis])
                before = arith.minsi(arith.addi(here, one), end)
            else:
                here = indices[axis]
                before = arith.maxsi(arith.subi(here, one), end)
            at, previous = list(indices), list(indices)
            at[axis], previous[axis] = here, before
            value = combine(tensor.extract(acc, previous), tensor.extract(operand, at))
            return tensor.insert(value, acc, at)

        return loop_nest(shape, start, body)

    return rule


RULES: dict[str, Rule] = {
    **{f"arg{kind}": _arg_extreme(kind) for kind in ("max", "min")},
    **{f"cum{kind}": _cumulative(kind) for kind in ("sum", "prod", "max", "min")},
}
