"""`mlax-split-reductions`: bound the run of float additions any one accumulator makes.

A linalg.generic that sums floats adds each element to its output element in turn, so the
rounding error grows with the run's length: summing 2^24 f32 values near 1e4 gave a mean of
9987.28 instead of 10000 (each addend rounds to the spacing of a running total near 1e11).
XLA's CPU compiler turns long reductions into a tree (its TreeReductionRewriter); this pass
does the same on linalg, after fusion, so the elementwise producers stay fused:

    %s = sum over n = a*b + t of f(x[i])     becomes
    %p[k] = sum over b of f(x[k*b + j])      (tensor.expand_shape of x's first a*b elements)
    %s = sum over a of %p[k], starting from the sum over the last t elements (extract_slice)

A reduction's run is its number of iterations per output element, divided by the vector lanes
when its innermost loop is a reduction the vectorizer spreads over lanes. Runs longer than
`max-run` are split at the innermost reduction dimensions; the partial results are a tensor
whose reduction is split again while it is still too long. The blocks are contiguous runs of
the innermost dimensions, so the vectorizer still sees them, and the block index is a parallel
dimension, so a reduction to one number now runs on several threads. Only float sums and
products marked reassociable (`fastmath<reassoc>`, which the lowering gives `reduce_sum` and
`reduce_prod`) are rewritten: their order is free. Integer sums are exact; max/min never round.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, tensor

from mlax.dialect.opviews import linalg
from mlax.passes.registry import ModulePass, option, register_pass
from mlax.passes.walk import nested_ops

_COMBINERS = {"arith.addf": 0.0, "arith.mulf": 1.0}  # combiner -> identity
_PARALLEL = "#linalg.iterator_type<parallel>"
_REDUCTION = "#linalg.iterator_type<reduction>"
_VECTOR_LANES = 16  # f32 lanes of an AVX-512 register: a vectorized run is this many runs


@dataclass(frozen=True)
class _Reduction:
    """A linalg.generic this pass can split: its loop sizes, iterators and maps."""

    op: ir.Operation
    sizes: list[int]
    reduced: list[int]  # the reduction dimensions, in loop order
    maps: list[ir.AffineMap]  # inputs' maps, then the output's
    combiner: str

    @property
    def run(self) -> int:
        """The iterations each output element accumulates."""
        return math.prod(self.sizes[d] for d in self.reduced)


def _dims(m: ir.AffineMap) -> list[int | None] | None:
    """The loop dimension of each result of ``m`` (None for the constant 0 that indexes a
    broadcast dimension of size 1), or None if some result is any other expression."""
    dims: list[int | None] = []
    for expr in m.results:
        if isinstance(expr, ir.AffineDimExpr):
            dims.append(ir.AffineDimExpr(expr).position)
        elif isinstance(expr, ir.AffineConstantExpr) and ir.AffineConstantExpr(expr).value == 0:
            dims.append(None)
        else:
            return None
    return dims


def _map(loop_count: int, dims: list[int | None]) -> ir.AffineMap:
    return ir.AffineMap.get(loop_count, 0, [ir.AffineConstantExpr.get(0) if d is None
                                            else ir.AffineDimExpr.get(d) for d in dims])


def _substitute(m: ir.AffineMap, loop_count: int, replacements: list[ir.AffineExpr]) -> ir.AffineMap:
    """``m`` with loop dimension i replaced by ``replacements[i]`` (over ``loop_count`` loops)."""
    into = ir.AffineMap.get(loop_count, 0, replacements)
    return ir.AffineMap.get(loop_count, 0, [ir.AffineExpr.simplify_affine_expr(e.compose(into), loop_count, 0)
                                            for e in m.results])


def _as_reduction(op: ir.Operation) -> _Reduction | None:
    """``op`` as a splittable reduction, or None: one float output accumulated by a
    reassociable add or multiply, static shapes, every loop's size given by an operand
    that reads it as a plain dimension (others may read any affine expression)."""
    if op.name != "linalg.generic" or len(op.results) != 1:
        return None
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    iterators = [str(a) for a in op.attributes["iterator_types"]]
    if _REDUCTION not in iterators:
        return None
    result = ir.RankedTensorType(op.results[0].type)
    if not isinstance(result.element_type, ir.FloatType):
        return None
    block = op.regions[0].blocks[0]
    accumulator = block.arguments[len(block.arguments) - 1]
    yielded = block.operations[len(block.operations) - 1].operands[0].owner
    if not isinstance(yielded, ir.OpView) or yielded.operation.name not in _COMBINERS:
        return None
    combine = yielded.operation
    fastmath = combine.attributes["fastmath"] if "fastmath" in combine.attributes else None
    if fastmath is None or "reassoc" not in str(fastmath):
        return None
    uses = list(accumulator.uses)
    if len(uses) != 1 or uses[0].owner != combine:
        return None
    sizes: list[int | None] = [None] * len(iterators)
    for i, (value, m) in enumerate(zip(op.operands, maps, strict=True)):
        dims = _dims(m)
        if dims is None:  # an input read through a shifted or reversed index: sizes come from others
            if i == len(maps) - 1:
                return None
            continue
        looped = [d for d in dims if d is not None]
        if len(set(looped)) != len(looped):
            return None
        shape = ir.RankedTensorType(value.type).shape if isinstance(value.type, ir.RankedTensorType) else []
        for d, size in zip(dims, shape, strict=True):
            if d is not None:
                sizes[d] = size
    if any(s is None or s < 0 for s in sizes):
        return None
    reduced = [d for d, it in enumerate(iterators) if it == _REDUCTION]
    return _Reduction(op, sizes, reduced, maps, combine.name)


def _longest_run(r: _Reduction, max_run: int) -> int:
    """How many iterations per output element a reduction may make: ``max_run``, times the
    vector lanes when its innermost loop is a reduction long enough to fill them."""
    innermost = len(r.sizes) - 1
    vectorized = innermost in r.reduced and r.sizes[innermost] >= 4 * _VECTOR_LANES
    return max_run * (_VECTOR_LANES if vectorized else 1)


def _split_point(r: _Reduction, limit: int) -> tuple[int, int]:
    """(dimension to split, block size): the innermost reduction dimensions whose iterations
    fit in ``limit`` stay whole, and the next one is cut into blocks of at most what is left."""
    inner = 1
    for d in reversed(r.reduced):
        if inner * r.sizes[d] > limit:
            return d, max(1, limit // inner)
        inner *= r.sizes[d]
    raise AssertionError("the reduction fits: nothing to split")


def _shape_of(value: ir.Value) -> list[int]:
    return list(ir.RankedTensorType(value.type).shape)


def _slice(value: ir.Value, axis: int, start: int, size: int) -> ir.Value:
    """``value[..., start:start+size, ...]`` along ``axis``, a view after bufferization."""
    shape = _shape_of(value)
    if start == 0 and size == shape[axis]:
        return value
    offsets = [start if i == axis else 0 for i in range(len(shape))]
    sizes = [size if i == axis else s for i, s in enumerate(shape)]
    t = ir.RankedTensorType.get(sizes, ir.RankedTensorType(value.type).element_type)
    return tensor.extract_slice(t, value, [], [], [], offsets, sizes, [1] * len(shape))


def _split_axis(value: ir.Value, axis: int, blocks: int, block: int) -> ir.Value:
    """``value`` with dimension ``axis`` (``blocks * block`` long) as two: (blocks, block)."""
    shape = _shape_of(value)
    expanded = shape[:axis] + [blocks, block] + shape[axis + 1:]
    groups = [[i] for i in range(axis)] + [[axis, axis + 1]] + [[i + 1] for i in range(axis + 1, len(shape))]
    i64 = ir.IntegerType.get_signless(64)
    attr = ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups])
    t = ir.RankedTensorType.get(expanded, ir.RankedTensorType(value.type).element_type)
    return tensor.expand_shape(t, value, attr, [], expanded)


def _identity_fill(shape: list[int], element: ir.Type, combiner: str) -> ir.Value:
    identity = arith.constant(element, ir.FloatAttr.get(element, _COMBINERS[combiner]))
    return linalg.fill(identity, outs=[tensor.empty(shape, element)])


def _set_maps(op: ir.Operation, maps: list[ir.AffineMap], iterators: list[str]) -> None:
    op.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])
    op.attributes["iterator_types"] = ir.ArrayAttr.get([ir.Attribute.parse(i) for i in iterators])


def _index_ops(op: ir.Operation) -> list[ir.Operation]:
    return [o for o in nested_ops(op) if o.name == "linalg.index"]


def _index_dim(index_op: ir.Operation) -> int:
    return ir.IntegerAttr(index_op.attributes["dim"]).value


def _set_index_dim(index_op: ir.Operation, dim: int) -> None:
    index_op.attributes["dim"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dim)


def _tail(r: _Reduction, axis_dim: int, start: int, length: int) -> ir.Operation:
    """The reduction over the last ``length`` iterations of loop ``axis_dim`` (from ``start``),
    accumulated into the original output: a clone reading slices of its inputs (or, for an
    input read through an expression, the same input at the shifted index)."""
    loops = len(r.sizes)
    shifted = [ir.AffineDimExpr.get(d) + ir.AffineConstantExpr.get(start) if d == axis_dim
               else ir.AffineDimExpr.get(d) for d in range(loops)]
    operands, maps = list(r.op.operands), list(r.maps)
    for i, m in enumerate(r.maps[:-1]):
        dims = _dims(m)
        if dims is not None and axis_dim in dims:
            operands[i] = _slice(operands[i], dims.index(axis_dim), start, length)
        elif dims is None:
            maps[i] = _substitute(m, loops, shifted)
    tail = r.op.clone(ip=ir.InsertionPoint(r.op))
    for i, value in enumerate(operands):
        tail.operands[i] = value
    _set_maps(tail, maps, [str(a) for a in r.op.attributes["iterator_types"]])
    for index_op in _index_ops(tail):
        if _index_dim(index_op) == axis_dim:
            _shift_index(index_op, start)
    return tail


def _shift_index(index_op: ir.Operation, offset: int) -> None:
    """Every use of ``index_op`` sees its value plus ``offset`` (the position in the full loop)."""
    value = index_op.results[0]
    with index_op.location, ir.InsertionPoint.after(index_op):
        shifted = arith.addi(value, arith.constant(ir.IndexType.get(), offset))
    value.replace_all_uses_except(shifted, shifted.owner.operation)


def _split(r: _Reduction, limit: int) -> list[ir.Operation]:
    """Rewrite ``r`` as a blocked reduction into partials and a reduction of the partials;
    returns the new reductions that may still be too long (the tail, the partials')."""
    op = r.op
    split_dim, block = _split_point(r, limit)
    if not any(dims is not None and split_dim in dims for dims in map(_dims, r.maps[:-1])):
        return []  # no input gives the split loop's size once its index is an expression
    n = r.sizes[split_dim]
    blocks, remainder = divmod(n, block)
    outer_reduced = [d for d in r.reduced if d < split_dim]
    with op.location, ir.InsertionPoint(op):
        accumulated = op.operands[len(op.operands) - 1]
        rewritten = []
        if remainder:
            tail = _tail(r, split_dim, blocks * block, remainder)
            accumulated = tail.results[0]
            rewritten.append(tail)

        # Stage 1: loop dim split_dim becomes (split_dim: the block, split_dim + 1: within it).
        def renumber(d: int) -> int:
            return d if d <= split_dim else d + 1

        loop_count = len(r.sizes) + 1
        stage_iterators = []
        for d in range(len(r.sizes)):
            kind = _REDUCTION if d in r.reduced else _PARALLEL
            if d == split_dim:
                stage_iterators += [_PARALLEL, _REDUCTION]
            else:
                stage_iterators.append(_PARALLEL if d in outer_reduced else kind)
        kept = [d for d, it in enumerate(stage_iterators) if it == _PARALLEL]
        partial_shape = []
        for d in kept:
            partial_shape.append(blocks if d == split_dim else
                                 block if d == split_dim + 1 else r.sizes[d - (d > split_dim)])
        element = ir.RankedTensorType(op.results[0].type).element_type
        maps, operands = [], list(op.operands)
        joined = [ir.AffineDimExpr.get(split_dim) * ir.AffineConstantExpr.get(block)
                  + ir.AffineDimExpr.get(split_dim + 1) if d == split_dim
                  else ir.AffineDimExpr.get(renumber(d)) for d in range(len(r.sizes))]
        for i, m in enumerate(r.maps[:-1]):
            dims = _dims(m)
            if dims is None:
                maps.append(_substitute(m, loop_count, joined))
                continue
            new_dims: list[int | None] = []
            for d in dims:
                new_dims += ([split_dim, split_dim + 1] if d == split_dim
                             else [None if d is None else renumber(d)])
            if split_dim in dims:
                axis = dims.index(split_dim)
                operands[i] = _split_axis(_slice(operands[i], axis, 0, blocks * block), axis, blocks, block)
            maps.append(_map(loop_count, new_dims))
        maps.append(_map(loop_count, kept))
        operands[-1] = _identity_fill(partial_shape, element, r.combiner)
        stage = op.clone(ip=ir.InsertionPoint(op))
        for i, value in enumerate(operands):
            stage.operands[i] = value
        stage.results[0].set_type(ir.RankedTensorType.get(partial_shape, element))
        _set_maps(stage, maps, stage_iterators)
        for index_op in _index_ops(stage):
            d = _index_dim(index_op)
            if d == split_dim:
                _join_index(index_op, split_dim, block)
            elif d > split_dim:
                _set_index_dim(index_op, d + 1)

        # Stage 2: reduce the partials over the outer reduction dims and the blocks.
        parallel_kept = [i for i, d in enumerate(kept) if d not in outer_reduced and d != split_dim]
        positions = {d - (d > split_dim): i for i, d in enumerate(kept)}
        output_dims = [None if d is None else positions[d] for d in _dims(r.maps[-1])]
        rank = len(kept)
        iterators = [_PARALLEL if i in parallel_kept else _REDUCTION for i in range(rank)]
        combine = linalg.GenericOp(
            [op.results[0].type], [stage.results[0]], [accumulated],
            ir.ArrayAttr.get([ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank)),
                              ir.AffineMapAttr.get(_map(rank, output_dims))]),
            ir.ArrayAttr.get([ir.Attribute.parse(i) for i in iterators]))
        body = combine.regions[0].blocks.append(element, element)
        with ir.InsertionPoint(body):
            x, acc = body.arguments
            value = (arith.addf if r.combiner == "arith.addf" else arith.mulf)(x, acc)
            value.owner.attributes["fastmath"] = ir.Attribute.parse("#arith.fastmath<reassoc>")
            linalg.yield_([value])
    op.results[0].replace_all_uses_with(combine.result)
    op.erase()
    return [*rewritten, combine.operation]


def _join_index(index_op: ir.Operation, split_dim: int, block: int) -> None:
    """``linalg.index split_dim`` in the split loop: block index * block + index within it."""
    value = index_op.results[0]
    index = ir.IndexType.get()
    with index_op.location, ir.InsertionPoint.after(index_op):
        inner = linalg.index(split_dim + 1)
        joined = arith.addi(arith.muli(value, arith.constant(index, block)), inner)
    value.replace_all_uses_except(joined, joined.owner.operands[0].owner.operation)


@register_pass
@dataclass
class SplitReductions(ModulePass):
    """Split float sums and products whose runs exceed max-run into reductions of blocks."""

    argument = "mlax-split-reductions"
    sees_mlax_ops = False
    summary = "bound the run of reassociable float additions per accumulator (blocked reductions)"

    max_run: int = option(32, "the most elements one accumulator (one vector lane) adds in a row")

    def run(self, module: ir.Operation) -> None:
        pending = [r for op in nested_ops(module) if (r := _as_reduction(op)) is not None]
        while pending:
            r = pending.pop()
            limit = _longest_run(r, self.max_run)
            if r.run > limit:
                pending += [found for op in _split(r, limit) if (found := _as_reduction(op)) is not None]
