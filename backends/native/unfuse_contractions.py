"""`mlax-unfuse-contractions`: elementwise work that fusion moved into a contraction goes back out.

`linalg-fuse-elementwise-ops` fuses a single-use elementwise producer into any
``linalg.generic`` consumer, and its reshape propagation turns ``linalg.matmul(collapse(x), w)``
into a generic first. For a contraction that is a loss twice over: the producer's body now
runs once per element of the *product* (a layer norm feeding ``x @ w`` computed N times per
input element, a GELU 4 x width times), and the op is no longer ``out + a * b``, so neither
mlax-linalg-to-blas nor mlax-gpu-matmul recognises it and it runs as a naive loop nest. A
stack of transformer layers under `lax.scan` hit both (its loop bodies' activations have one
use each): 100-200x slower than the same step unrolled.

A ``linalg.generic`` on tensors is rewritten when its body ends in ``out + x * y`` (floats) and
``x`` or ``y`` is computed in the body from the inputs over fewer loops than the op has (so
it is recomputed across the other loops): each such operand becomes a parallel generic of its
own over the loops it reads (the body ops it needs, cloned; loops ordered as its largest
input reads them), and the contraction reads its result. What is left, ``out + a * b`` of two
inputs, is what the gemm passes match. A plain widening (``arith.extf`` of one input) stays
where it is (mlax-gpu-matmul reads half inputs so), and an operand that reads every loop is
left fused: that op is a reduction of a product (``sum(g * h)``), where fusion is a win.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, tensor

from mlax.dialect.opviews import linalg
from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import nested_ops

_PARALLEL = "#linalg.iterator_type<parallel>"


@dataclass(frozen=True)
class _Operand:
    """One factor of the product: the body ops computing it (in block order) and the inputs
    (their positions among the op's inputs) they read."""

    value: ir.Value
    ops: tuple[ir.Operation, ...]
    inputs: tuple[int, ...]


def _factor(value: ir.Value, block: ir.Block, n_inputs: int) -> _Operand | None:
    """The slice of ``block`` computing ``value``; None if it reads the accumulator or a loop
    index, or holds an op with regions."""
    arguments = list(block.arguments)
    body = block.owner.operation
    needed: set[ir.Operation] = set()
    inputs: set[int] = set()
    pending = [value]
    while pending:
        current = pending.pop()
        if isinstance(current, ir.BlockArgument):
            if current.owner == block:
                if arguments.index(current) >= n_inputs:
                    return None
                inputs.add(arguments.index(current))
            continue
        producer = current.owner.operation
        if producer.parent.operation != body or producer in needed:
            continue  # defined outside the op (a constant): used as it is
        if producer.name == "linalg.index" or len(producer.regions):
            return None
        needed.add(producer)
        pending.extend(producer.operands)
    order = [op.operation for op in block.operations if op.operation in needed]
    return _Operand(value, tuple(order), tuple(sorted(inputs)))


def _map_dims(map_attr: ir.Attribute) -> list[int] | None:
    """The loop dimensions an indexing map reads, in order; None for results other than a
    loop dimension or a constant (a broadcast unit dimension)."""
    dims = []
    for expr in ir.AffineMapAttr(map_attr).value.results:
        if isinstance(expr, ir.AffineDimExpr):
            dims.append(ir.AffineDimExpr(expr).position)
        elif not isinstance(expr, ir.AffineConstantExpr):
            return None
    return dims


def _loop_sizes(op: ir.Operation, maps: Sequence[ir.Attribute]) -> dict[int, int] | None:
    sizes: dict[int, int] = {}
    for value, map_attr in zip(op.operands, maps, strict=True):
        shape = ir.RankedTensorType(value.type).shape
        for j, expr in enumerate(ir.AffineMapAttr(map_attr).value.results):
            if isinstance(expr, ir.AffineDimExpr):
                sizes[ir.AffineDimExpr(expr).position] = shape[j]
    return None if any(s < 0 for s in sizes.values()) else sizes


def _dims_map(loops: int, dims: Sequence[int]) -> ir.AffineMapAttr:
    return ir.AffineMapAttr.get(ir.AffineMap.get(loops, 0, [ir.AffineDimExpr.get(d) for d in dims]))


def _is_widening(factor: _Operand) -> bool:
    return len(factor.ops) == 1 and factor.ops[0].name == "arith.extf"


def _materialize(op: ir.Operation, factor: _Operand, maps: Sequence[ir.Attribute],
                 sizes: dict[int, int]) -> tuple[ir.Value, list[int]]:
    """A parallel generic computing ``factor`` over the loops it reads, before ``op``; its
    result and those loops, in the order of its dimensions."""
    input_dims = {i: _map_dims(maps[i]) for i in factor.inputs}
    widest = max(factor.inputs, key=lambda i: len(input_dims[i]))
    loops = list(dict.fromkeys(input_dims[widest]))
    loops += sorted({d for dims in input_dims.values() for d in dims} - set(loops))
    position = {d: i for i, d in enumerate(loops)}

    def remapped(map_attr: ir.Attribute) -> ir.AffineMapAttr:
        exprs = [ir.AffineDimExpr.get(position[ir.AffineDimExpr(e).position])
                 if isinstance(e, ir.AffineDimExpr) else e for e in ir.AffineMapAttr(map_attr).value.results]
        return ir.AffineMapAttr.get(ir.AffineMap.get(len(loops), 0, exprs))

    element = factor.value.type
    result = ir.RankedTensorType.get([sizes[d] for d in loops], element)
    inputs = [op.operands[i] for i in factor.inputs]
    with op.location, ir.InsertionPoint(op):
        init = tensor.empty(result.shape, element)
        producer = linalg.GenericOp(
            [result], inputs, [init],
            ir.ArrayAttr.get([*(remapped(maps[i]) for i in factor.inputs),
                              ir.AffineMapAttr.get(ir.AffineMap.get_identity(len(loops)))]),
            ir.ArrayAttr.get([ir.Attribute.parse(_PARALLEL)] * len(loops)))
    old_block = op.regions[0].blocks[0]
    block = producer.regions[0].blocks.append(*[old_block.arguments[i].type for i in factor.inputs], element)
    mapping: dict[ir.Value, ir.Value] = {old_block.arguments[i]: block.arguments[j]
                                         for j, i in enumerate(factor.inputs)}
    with ir.InsertionPoint(block):
        for body_op in factor.ops:
            clone = body_op.clone()
            for k, operand in enumerate(body_op.operands):
                if operand in mapping:
                    clone.operands[k] = mapping[operand]
            for old, new in zip(body_op.results, clone.results, strict=True):
                mapping[old] = new
        linalg.YieldOp([mapping[factor.value]])
    return producer.result, loops


def _product(op: ir.Operation, n_inputs: int) -> tuple[ir.Operation, ir.Operation] | None:
    """The ``mulf`` and ``addf`` of a body ending in ``out + x * y``."""
    block = op.regions[0].blocks[0]
    done = [o.operation for o in block.operations][-1]
    if done.name != "linalg.yield" or not isinstance(done.operands[0], ir.OpResult):
        return None
    add = done.operands[0].owner.operation
    accumulator = block.arguments[n_inputs]
    if add.name != "arith.addf" or accumulator not in list(add.operands):
        return None
    product = add.operands[1] if add.operands[0] == accumulator else add.operands[0]
    if not isinstance(product, ir.OpResult) or product.owner.name != "arith.mulf":
        return None
    mul = product.owner.operation
    return (mul, add) if mul.parent.operation == op.operation else None


def _unfuse(op: ir.Operation) -> bool:
    """Rewrite one contraction; whether it was rewritten."""
    segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    iterators = list(ir.ArrayAttr(op.attributes["iterator_types"]))
    if segments[1] != 1 or all("parallel" in str(t) for t in iterators):
        return False
    n_inputs, loops = segments[0], len(iterators)
    found = _product(op, n_inputs)
    maps = list(ir.ArrayAttr(op.attributes["indexing_maps"]))
    sizes = _loop_sizes(op, maps)
    if found is None or sizes is None or any(_map_dims(m) is None for m in maps[:n_inputs]):
        return False
    mul, add = found
    block = op.regions[0].blocks[0]
    factors = [_factor(v, block, n_inputs) for v in mul.operands]
    if None in factors:
        return False
    if any(not f.inputs for f in factors):  # a value from outside the op (a scalar): no product
        return False
    kept = [not f.ops or _is_widening(f) for f in factors]  # an input as it is, or widened in the body
    if all(kept):
        return False
    for factor, keep in zip(factors, kept, strict=True):
        reads = {d for i in factor.inputs for d in _map_dims(maps[i])}
        if not keep and len(reads) == loops:  # a reduction of a product: fusion pays
            return False
    inputs: list[ir.Value] = []
    input_maps: list[ir.Attribute] = []
    for factor, keep in zip(factors, kept, strict=True):
        if keep:
            (position,) = factor.inputs
            inputs.append(op.operands[position])
            input_maps.append(maps[position])
        else:
            value, dims = _materialize(op, factor, maps, sizes)
            inputs.append(value)
            input_maps.append(_dims_map(loops, dims))
    widenings = [f.ops[0] if keep and f.ops else None for f, keep in zip(factors, kept, strict=True)]
    _rebuild(op, inputs, [*input_maps, maps[n_inputs]], widenings, mul, add)
    return True


def _rebuild(op: ir.Operation, inputs: list[ir.Value], maps: list[ir.Attribute],
             widenings: list[ir.Operation | None], mul: ir.Operation, add: ir.Operation) -> None:
    """Replace ``op`` by ``out + a * b`` over ``inputs`` (each widened first where it was)."""
    init = op.operands[len(op.operands) - 1]
    with op.location, ir.InsertionPoint(op):
        new = linalg.GenericOp([op.results[0].type], inputs, [init], ir.ArrayAttr.get(maps),
                               op.attributes["iterator_types"])
    element = ir.RankedTensorType(init.type).element_type
    block = new.regions[0].blocks.append(*[ir.RankedTensorType(v.type).element_type for v in inputs], element)
    with ir.InsertionPoint(block):
        factors = []
        for argument, widening in zip(block.arguments, widenings, strict=False):
            if widening is not None:
                widened = widening.clone()
                widened.operands[0] = argument
                argument = widened.results[0]
            factors.append(argument)
        product = arith.MulFOp(*factors)
        total = arith.AddFOp(block.arguments[len(inputs)], product.result)
        for source, target in ((mul, product), (add, total)):
            if "fastmath" in source.attributes:
                target.attributes["fastmath"] = source.attributes["fastmath"]
        linalg.YieldOp([total.result])
    op.results[0].replace_all_uses_with(new.results[0])
    op.erase()


@register_pass
@dataclass
class UnfuseContractions(ModulePass):
    """Move elementwise producers that fusion put inside a contraction back into their own op."""

    argument = "mlax-unfuse-contractions"
    sees_mlax_ops = False
    summary = "give the elementwise work fused into a contraction's operands its own op, so it stays a gemm"

    def run(self, module: ir.Operation) -> None:
        # Decide on a snapshot: a rewrite erases the op (and the ops of its body).
        candidates = [op for op in nested_ops(module)
                      if op.name == "linalg.generic" and len(op.results) == 1
                      and isinstance(op.results[0].type, ir.RankedTensorType)]
        for op in candidates:
            with op.location:
                _unfuse(op)
