"""Rules for dot_general: contractions with any dimension numbers, as named linalg.matmul /
linalg.batch_matmul on row-major matrices (what a later pass can hand to BLAS).

Each operand is converted elementwise to the accumulation type (the reference's: the result
type, f32 for f16/bf16 results, an i32/i64 count for bool results), brought into the canonical
layout (batch..., M..., K...) x (batch..., K..., N...) with linalg.transpose where it is not
already, and regrouped to [B,] M x K and [B,] K x N with tensor.collapse_shape / expand_shape
(an empty group is a unit dimension). A transposed matrix, (batch..., K..., M...) or (batch...,
N..., K...), is read as it is through the product's indexing maps (BLAS's transpose flags,
mlax-linalg-to-blas), and an operand that is itself a transpose (``x @ w.T``) is read from its
source with the dimension numbers permuted, so neither is copied. The product (a zero
linalg.fill as init) has the result's layout (batch, lhs free, rhs free), so it only needs
regrouping back, then the conversion to the result type (truncf, or != 0 for bool). Contracting
over no elements (or a result with none) is a linalg.generic yielding zero; a long float
contraction into at most 16 numbers (a dot of vectors) is one reduction generic, summed in
blocks by mlax-split-reductions like any other sum. A precision other
than DEFAULT x DEFAULT is copied onto the product as the discardable attribute
``mlax.precision`` (jax's pair of names), which mlax-gpu-matmul reads (HIGHEST: exact f32, not
TF32); the CPU backend ignores it and computes exactly, as XLA:CPU.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mlir import ir
from mlir.dialects import arith, tensor

from mlax.dialect import read_attributes
from mlax.dialect.attrs import to_attribute
from mlax.dialect.ops.common import DEFAULT_PRECISION
from mlax.dialect.opviews import linalg
from mlax.passes.lower_to_linalg.common import (
    Rule,
    generic,
    i64_array,
    is_bool,
    reassociation,
    scalar,
)
from mlax.passes.lower_to_linalg.convert import convert_scalar

_HALF = ("f16", "bf16")
# The discardable attribute that carries a dot_general's (lhs, rhs) precision onto its product.
PRECISION_ATTR = "mlax.precision"


def _convert(value: ir.Value, t: ir.Type) -> ir.Value:
    tensor_type = ir.RankedTensorType(value.type)
    if tensor_type.element_type == t:
        return value
    return generic([value], ir.RankedTensorType.get(tensor_type.shape, t), lambda x: convert_scalar(x, t))


def _unit_groups(groups: Sequence[Sequence[int]]) -> list[list[int]]:
    """Reassociation between the merged non-empty groups and one dimension per group: each
    empty group's unit dimension joins the next non-empty group (the last one at the end)."""
    result: list[list[int]] = []
    pending: list[int] = []
    for position, group in enumerate(groups):
        pending.append(position)
        if group:
            result.append(pending)
            pending = []
    if result:
        result[-1].extend(pending)
    return result


def _merge(value: ir.Value, groups: Sequence[Sequence[int]]) -> ir.Value:
    """``value`` with each group of consecutive dimensions merged into one (size 1 if empty)."""
    t = ir.RankedTensorType(value.type)
    nonempty = [g for g in groups if g]
    if any(len(g) != 1 for g in nonempty):
        merged = [math.prod(t.shape[d] for d in g) for g in nonempty]
        value = tensor.collapse_shape(ir.RankedTensorType.get(merged, t.element_type), value,
                                      reassociation(nonempty))
    if len(nonempty) == len(groups):
        return value
    shape = [math.prod(t.shape[d] for d in g) for g in groups]
    return tensor.expand_shape(ir.RankedTensorType.get(shape, t.element_type), value,
                               reassociation(_unit_groups(groups)), [], shape)


def _split(value: ir.Value, groups: Sequence[Sequence[int]], shape: Sequence[int]) -> ir.Value:
    """The inverse of `_merge`: one dimension per group back to the dimensions ``shape``."""
    element = ir.RankedTensorType(value.type).element_type
    nonempty = [g for g in groups if g]
    if len(nonempty) != len(groups):
        merged = [math.prod(shape[d] for d in g) for g in nonempty]
        value = tensor.collapse_shape(ir.RankedTensorType.get(merged, element), value,
                                      reassociation(_unit_groups(groups)))
    if all(len(g) == 1 for g in nonempty):
        return value
    return tensor.expand_shape(ir.RankedTensorType.get(shape, element), value, reassociation(nonempty),
                               [], list(shape))


def _canonical(value: ir.Value, dims: Sequence[Sequence[int]],
               swapped: Sequence[Sequence[int]]) -> tuple[ir.Value, bool]:
    """``value`` with the groups ``dims`` in order, each merged into one dimension, and False;
    or, where ``value``'s dimensions already come in the order ``swapped`` (the two matrix
    groups exchanged: a transposed matrix, which the product reads through its indexing map
    and BLAS through its transpose flag), ``value`` merged in that order and True. Otherwise
    the groups are first brought in order by a ``linalg.transpose``."""
    def in_order(groups: Sequence[Sequence[int]]) -> bool:
        permutation = [d for g in groups for d in g]
        return permutation == sorted(permutation)

    def merged(groups: Sequence[Sequence[int]]) -> ir.Value:
        ranges, start = [], 0
        for g in groups:
            ranges.append(list(range(start, start + len(g))))
            start += len(g)
        return _merge(value, ranges)

    if not in_order(dims) and in_order(swapped):
        return merged(swapped), True
    if not in_order(dims):
        permutation = [d for g in dims for d in g]
        t = ir.RankedTensorType(value.type)
        init = tensor.empty([t.shape[d] for d in permutation], t.element_type)
        value = linalg.transpose(value, outs=[init], permutation=permutation).results[0]
    return merged(dims), False


def _permuted_source(value: ir.Value) -> tuple[ir.Value, list[int]] | None:
    """``(source, permutation)`` where ``value`` only permutes the dimensions of ``source``
    (dimension i of ``value`` is dimension ``permutation[i]`` of ``source``): a
    ``linalg.transpose``, or the copy ``mlax.transpose`` lowers to (a parallel generic yielding
    its input, read through a permutation). A product reads the source instead."""
    if not isinstance(value, ir.OpResult):
        return None
    op = value.owner
    if op.name == "linalg.transpose":
        return op.operands[0], list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
    if op.name != "linalg.generic" or len(op.operands) != 2:
        return None
    body = op.regions[0].blocks[0]
    ops = list(body.operations)
    if len(ops) != 1 or ops[0].operands[0] != body.arguments[0]:
        return None
    in_map, out_map = (ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"]))
    if not (in_map.is_permutation and out_map == ir.AffineMap.get_identity(out_map.n_dims)):
        return None
    reads = [ir.AffineDimExpr(e).position for e in in_map.results]
    return op.operands[0], [reads.index(i) for i in range(len(reads))]


def _fold_permutation(value: ir.Value, groups: Sequence[Sequence[int]]) -> tuple[ir.Value, list[list[int]]]:
    """``value`` and its dimension groups, or the source of a permutation ``value`` is and
    the same groups in the source's dimensions (XLA folds transposes into dots alike)."""
    found = _permuted_source(value)
    if found is None:
        return value, [list(g) for g in groups]
    source, permutation = found
    return source, [[permutation[d] for d in g] for g in groups]


def _product_maps(batched: bool, swap_a: bool, swap_b: bool) -> list[ir.AffineMap]:
    """The indexing maps of a (batch) matmul over loops ([b,] m, n, k) whose operands may be
    transposed matrices."""
    d = [ir.AffineDimExpr.get(i) for i in range(4 if batched else 3)]
    batch, (m, n, k) = (d[:1], d[1:]) if batched else ([], d)
    operands = [(k, m) if swap_a else (m, k), (n, k) if swap_b else (k, n), (m, n)]
    return [ir.AffineMap.get(len(d), 0, [*batch, *pair]) for pair in operands]


def _accumulator(result: ir.Type, contracted: int) -> ir.Type:
    """The reference's accumulation type: f32 for halves, a count wide enough for bool."""
    if str(result) in _HALF:
        return ir.F32Type.get()
    if is_bool(result):
        return ir.IntegerType.get_signless(32 if contracted < 2 ** 31 else 64)
    return result


_TINY_OUTPUT = 16
_LONG_CONTRACTION = 4096


def _as_reduction(op: ir.Operation, work: ir.Type) -> ir.Value:
    """The product as one reduction generic over (batch, lhs free, rhs free, contracting)
    loops, ``out + a * b`` reassociable: a dot of long vectors is a sum, which
    mlax-split-reductions blocks (a gemm of a 1 x K by a K x 1 matrix added a long run of
    products into one number: 6e-5 relative error at K = 2^22)."""
    lhs, rhs = op.operands
    lc, rc = i64_array(op, "lhs_contracting_dimensions"), i64_array(op, "rhs_contracting_dimensions")
    lb, rb = i64_array(op, "lhs_batch_dimensions"), i64_array(op, "rhs_batch_dimensions")
    ranks = [ir.RankedTensorType(v.type).rank for v in (lhs, rhs)]
    lfree = [d for d in range(ranks[0]) if d not in lc and d not in lb]
    rfree = [d for d in range(ranks[1]) if d not in rc and d not in rb]
    loops = len(lb) + len(lfree) + len(rfree) + len(lc)
    lhs_loop = {d: i for i, d in enumerate([*lb, *lfree])}
    lhs_loop.update({d: loops - len(lc) + i for i, d in enumerate(lc)})
    rhs_loop = {d: i for i, d in enumerate(rb)}
    rhs_loop.update({d: len(lb) + len(lfree) + i for i, d in enumerate(rfree)})
    rhs_loop.update({d: loops - len(lc) + i for i, d in enumerate(rc)})
    out_loops = loops - len(lc)

    def affine(positions: Sequence[int]) -> ir.AffineMapAttr:
        return ir.AffineMapAttr.get(ir.AffineMap.get(loops, 0, [ir.AffineDimExpr.get(p) for p in positions]))

    result = ir.RankedTensorType(op.results[0].type)
    accumulated = ir.RankedTensorType.get(result.shape, work)
    init = linalg.fill(scalar(work, 0), outs=[tensor.empty(result.shape, work)])
    iterators = ["parallel"] * out_loops + ["reduction"] * len(lc)
    product = linalg.GenericOp(
        [accumulated], [_convert(lhs, work), _convert(rhs, work)], [init],
        ir.ArrayAttr.get([affine([lhs_loop[d] for d in range(ranks[0])]),
                          affine([rhs_loop[d] for d in range(ranks[1])]), affine(range(out_loops))]),
        ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{i}>") for i in iterators]))
    block = product.regions[0].blocks.append(work, work, work)
    with ir.InsertionPoint(block):
        a, b, acc = block.arguments
        total = arith.addf(arith.mulf(a, b), acc)
        total.owner.attributes["fastmath"] = ir.Attribute.parse("#arith.fastmath<reassoc>")
        linalg.yield_([total])
    return _convert(product.result, result.element_type)


def _dot_general(op: ir.Operation) -> ir.Value:
    lhs, rhs = op.operands
    lc, rc = i64_array(op, "lhs_contracting_dimensions"), i64_array(op, "rhs_contracting_dimensions")
    lb, rb = i64_array(op, "lhs_batch_dimensions"), i64_array(op, "rhs_batch_dimensions")
    shapes = [ir.RankedTensorType(v.type).shape for v in (lhs, rhs)]
    lfree = [d for d in range(len(shapes[0])) if d not in lc and d not in lb]
    rfree = [d for d in range(len(shapes[1])) if d not in rc and d not in rb]
    result_type = ir.RankedTensorType(op.results[0].type)
    shape, result = list(result_type.shape), result_type.element_type
    contracted = math.prod(shapes[0][d] for d in lc)
    if contracted == 0 or 0 in shape:  # a generic, not a fill: elementwise fusion can drop an i1 buffer
        return generic([], result_type, lambda: scalar(result, 0))
    work = _accumulator(result, contracted)
    if isinstance(work, ir.FloatType) and math.prod(shape) <= _TINY_OUTPUT and contracted > _LONG_CONTRACTION:
        return _as_reduction(op, work)
    lhs, (lb_, lfree_, lc_) = _fold_permutation(lhs, [lb, lfree, lc])
    rhs, (rb_, rfree_, rc_) = _fold_permutation(rhs, [rb, rfree, rc])
    batch_a, batch_b = ([lb_], [rb_]) if lb else ([], [])
    a, swap_a = _canonical(_convert(lhs, work), [*batch_a, lfree_, lc_], [*batch_a, lc_, lfree_])
    b, swap_b = _canonical(_convert(rhs, work), [*batch_b, rc_, rfree_], [*batch_b, rfree_, rc_])
    rows = math.prod(shapes[0][d] for d in lfree)
    cols = math.prod(shapes[1][d] for d in rfree)
    batch = [math.prod(shapes[0][d] for d in lb)] if lb else []
    init = linalg.fill(scalar(work, 0), outs=[tensor.empty([*batch, rows, cols], work)])
    product = (linalg.batch_matmul if lb else linalg.matmul)(
        a, b, outs=[init], indexing_maps=_product_maps(bool(lb), swap_a, swap_b))
    precision = read_attributes(op)["precision"]
    if tuple(precision) != DEFAULT_PRECISION:
        product.owner.attributes[PRECISION_ATTR] = to_attribute("strs", precision)
    n_batch, n_lhs = len(lb), len(lb) + len(lfree)
    groups = [list(range(n_batch)), list(range(n_batch, n_lhs)), list(range(n_lhs, len(shape)))]
    out = _split(product, groups if lb else groups[1:], shape)
    if is_bool(result):
        zero = scalar(work, 0)
        return generic([out], ir.RankedTensorType.get(shape, result),
                       lambda x: arith.cmpi(arith.CmpIPredicate.ne, x, zero))
    return _convert(out, result)


def transposed_product(value: ir.Value, permutation: Sequence[int]) -> ir.Value | None:
    """``value`` permuted by ``permutation``, computed as a product with its operands exchanged
    (``(A B)^T = B^T A^T``), where ``value`` is a matmul (batch_matmul) that only this transpose
    reads and ``permutation`` exchanges its two matrix dimensions: None otherwise. The
    transpose rule of dot_general makes ``transpose(dot_general(g, x))`` for every weight
    gradient; read through the permutation, the gradient's consumer (the parameter update)
    walked a 1024 x 1024 matrix by columns, 15x slower than by rows (XLA's layout assignment
    folds it alike)."""
    if not isinstance(value, ir.OpResult) or value.owner.name not in ("linalg.matmul", "linalg.batch_matmul"):
        return None
    product = value.owner
    batched = product.name == "linalg.batch_matmul"
    if list(permutation) != ([0, 2, 1] if batched else [1, 0]) or len(list(value.uses)) != 1:
        return None
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(product.attributes["indexing_maps"])]
    swaps = [(sa, sb) for sa in (False, True) for sb in (False, True)
             if _product_maps(batched, sa, sb) == maps]
    if not swaps:
        return None
    (swap_a, swap_b), (a, b) = swaps[0], product.operands[:2]
    t = ir.RankedTensorType(value.type)
    shape = [*t.shape[:-2], t.shape[-1], t.shape[-2]]
    init = linalg.fill(scalar(t.element_type, 0), outs=[tensor.empty(shape, t.element_type)])
    swapped = (linalg.batch_matmul if batched else linalg.matmul)(
        b, a, outs=[init], indexing_maps=_product_maps(batched, not swap_b, not swap_a))
    if PRECISION_ATTR in product.attributes:
        swapped.owner.attributes[PRECISION_ATTR] = product.attributes[PRECISION_ATTR]
    return swapped


RULES: dict[str, Rule] = {"dot_general": _dot_general}
