"""Rules for reduce_{sum,prod,max,min,and,or} over `dimensions`.

Each is one linalg.generic with reduction iterators on the reduced dimensions, whose
output starts as a linalg.fill of the identity (0, 1, -inf / the minimum integer / false,
+inf / the maximum integer / true, all bits set, 0). max/min are the elementwise max/min
bodies (floats: NaN propagates, -0.0 < +0.0; complex: lexicographic, from -inf + 0i, as JAX);
float sums and products may be reassociated (fastmath<reassoc>); unsigned integers use maxui
/ minui from 0 / all ones. f16/bf16 accumulate in f32 and round once at the end, as the
reference does; booleans accumulate in i8. An empty `dimensions` is the operand.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir
from mlir.dialects import arith, tensor
from mlir.dialects import complex as complex_dialect

from mlax.dialect.opviews import linalg
from mlax.passes.lower_to_linalg.common import (
    Body,
    Rule,
    element_type,
    generic,
    is_bool,
    is_complex,
    is_float,
    is_unsigned,
    scalar,
)
from mlax.passes.lower_to_linalg.elementwise import COMPLEX_MAX, COMPLEX_MIN, by_kind

_HALF = ("f16", "bf16")
_INF = float("inf")


def is_inexact(t: ir.Type) -> bool:
    return is_float(t) or is_complex(t)


def _int_extreme(t: ir.Type, highest: bool) -> int:
    bits = ir.IntegerType(t).width
    if is_unsigned(t):
        return (1 << bits) - 1 if highest else 0
    return (1 << (bits - 1)) - 1 if highest else -(1 << (bits - 1))


# kind -> (combiner of (element, accumulator), identity for an element type)
MONOIDS: dict[str, tuple[Body, Callable[[ir.Type], float]]] = {
    "sum": (by_kind(arith.addf, arith.addi, complex_body=complex_dialect.add), lambda t: 0),
    "prod": (by_kind(arith.mulf, arith.muli, complex_body=complex_dialect.mul), lambda t: 1),
    "max": (by_kind(arith.maximumf, arith.maxsi, unsigned_body=arith.maxui, complex_body=COMPLEX_MAX),
            lambda t: -_INF if is_inexact(t) else _int_extreme(t, highest=False)),
    "min": (by_kind(arith.minimumf, arith.minsi, unsigned_body=arith.minui, complex_body=COMPLEX_MIN),
            lambda t: _INF if is_inexact(t) else _int_extreme(t, highest=True)),
    "and": (arith.andi, lambda t: -1),
    "or": (arith.ori, lambda t: 0),
}


def _reassociable(body: Body) -> Body:
    """A float sum or product whose order is free, as XLA's reduce: ``fastmath<reassoc>`` on
    the combiner lets LLVM keep several partial results in vector lanes (a sequential float
    sum does not vectorize). Only the reductions get it, not the cumulative ops."""

    def combine(acc: ir.Value, x: ir.Value) -> ir.Value:
        value = body(acc, x)
        if is_float(x.type):
            value.owner.attributes["fastmath"] = ir.Attribute.parse("#arith.fastmath<reassoc>")
        return value

    return combine


def work_type(t: ir.Type) -> ir.Type:
    """The accumulator type: f32 for f16/bf16 (the reference's), i8 for booleans (0 / 1, where
    maxsi / minsi are or / and, and each identity truncates to the right bit), else ``t``.
    Booleans widen because an i1 accumulator buffer does not lower to LLVM."""
    if str(t) in _HALF:
        return ir.F32Type.get()
    return ir.IntegerType.get_signless(8) if is_bool(t) else t


def _reduce(kind: str) -> Rule:
    combine, identity = MONOIDS[kind]
    if kind in ("sum", "prod"):
        combine = _reassociable(combine)

    def rule(op: ir.Operation) -> ir.Value:
        (operand,) = op.operands
        dims = set(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
        if not dims:
            return operand
        result = ir.RankedTensorType(op.results[0].type)
        t = element_type(operand)
        work = work_type(t)
        rank = ir.RankedTensorType(operand.type).rank
        kept = [d for d in range(rank) if d not in dims]
        init = linalg.fill(scalar(work, identity(work)),
                           outs=[tensor.empty(result.shape, work)])
        iterators = [ir.Attribute.parse(f"#linalg.iterator_type<{'reduction' if d in dims else 'parallel'}>")
                     for d in range(rank)]
        maps = [ir.AffineMap.get_identity(rank),
                ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in kept])]
        work_tensor = ir.RankedTensorType.get(result.shape, work)
        reduce = linalg.GenericOp([work_tensor], [operand], [init],
                                  ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                                  ir.ArrayAttr.get(iterators))
        block = reduce.regions[0].blocks.append(t, work)
        with ir.InsertionPoint(block):
            x, acc = block.arguments
            widen = arith.extf if is_float(t) else arith.extui
            # (accumulator, element), as XLA's reduce body: complex max/min is not commutative
            # where a part is NaN (the later element wins), every other combiner is
            linalg.yield_([combine(acc, x if work == t else widen(work, x))])
        if work == t:
            return reduce.result
        narrow = arith.truncf if is_float(t) else arith.trunci
        return generic([reduce.result], result, lambda x: narrow(t, x))

    return rule


RULES: dict[str, Rule] = {f"reduce_{kind}": _reduce(kind) for kind in MONOIDS}
