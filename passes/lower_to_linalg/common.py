"""Shared builders of `mlax-lower-to-linalg`: linalg.generic over tensors, element-type tests.

A rule (`Rule`) gets the mlax op with the insertion point and location set to it and
returns the value that replaces the op's single result, of the op's own result type.
Element-level code ("bodies") receives the scalar block arguments of a linalg.generic and
returns the scalar to yield; the scalars keep the op's element types, uiN included, so a
body picks unsigned semantics by `is_unsigned` (signless.py retypes uiN to iN at the end).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mlir import ir
from mlir.dialects import arith, scf, tensor
from mlir.dialects import complex as complex_dialect

from mlax.dialect.opviews import linalg
from mlax.passes.op_rules import Rule
from mlax.passes.registry import PassFailure

Body = Callable[..., ir.Value]

_HALF = ("f16", "bf16")


def fail(op: ir.Operation, message: str) -> PassFailure:
    return PassFailure(f"mlax-lower-to-linalg: {message}", op.location)


def is_float(t: ir.Type) -> bool:
    return isinstance(t, ir.FloatType)


def is_complex(t: ir.Type) -> bool:
    return isinstance(t, ir.ComplexType)


def is_bool(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).width == 1


def is_unsigned(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).is_unsigned


def width(t: ir.Type) -> int:
    return ir.IntegerType(t).width if isinstance(t, ir.IntegerType) else ir.FloatType(t).width


def element_type(value: ir.Value | ir.Type) -> ir.Type:
    t = value if isinstance(value, ir.Type) else value.type
    return ir.RankedTensorType(t).element_type


def integer_attr(t: ir.Type, value: int) -> ir.IntegerAttr:
    """``value`` modulo 2^width as an attribute of the integer type ``t`` (signless, signed or
    unsigned): the bindings take an int64, read as signed unless ``t`` is unsigned."""
    bits = width(t)
    value = int(value) & ((1 << bits) - 1)
    if value >= 1 << (bits - 1) and (bits == 64 or not is_unsigned(t)):
        value -= 1 << bits
    return ir.IntegerAttr.get(t, value)


def i64_array(op: ir.Operation, name: str) -> list[int]:
    """The integers of ``op``'s DenseI64ArrayAttr ``name`` (dimensions, shapes, indices)."""
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def reassociation(groups: Sequence[Sequence[int]]) -> ir.ArrayAttr:
    """The reassociation attribute of tensor.collapse_shape / expand_shape for ``groups``."""
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups])


def scalar(t: ir.Type, value: int | float | complex) -> ir.Value:
    """A scalar arith.constant of type ``t`` (integers given as Python ints, any sign), or a
    complex.constant for a complex type."""
    if is_complex(t):
        part, number = ir.ComplexType(t).element_type, complex(value)
        parts = [ir.FloatAttr.get(part, number.real), ir.FloatAttr.get(part, number.imag)]
        return complex_dialect.constant(t, ir.ArrayAttr.get(parts))
    if is_float(t):
        return arith.constant(t, ir.FloatAttr.get(t, float(value)))
    return arith.constant(t, integer_attr(t, value))


def in_f32(body: Body) -> Body:
    """Run a float body in f32 for f16/bf16 operands and round back once (as XLA's CPU)."""

    def wrapped(*args: ir.Value) -> ir.Value:
        t = args[0].type
        if str(t) not in _HALF:
            return body(*args)
        f32 = ir.F32Type.get()
        return arith.truncf(t, body(*(arith.extf(f32, a) for a in args)))

    return wrapped


def _affine_maps(inputs: Sequence[ir.Value], rank: int) -> list[ir.AffineMap]:
    """Identity maps for operands of the result's rank, the empty map for rank-0 operands."""
    maps = []
    for value in inputs:
        operand_rank = ir.RankedTensorType(value.type).rank
        maps.append(ir.AffineMap.get_identity(rank) if operand_rank == rank
                    else ir.AffineMap.get(rank, 0, []))
    return maps


def generic(inputs: Sequence[ir.Value], result_type: ir.Type, body: Body,
            maps: Sequence[ir.AffineMap] | None = None) -> ir.Value:
    """A parallel linalg.generic writing a fresh tensor of ``result_type``; ``body`` maps the
    scalar inputs (the empty list for none) to the scalar result."""
    result = ir.RankedTensorType(result_type)
    rank = result.rank
    maps = list(maps) if maps is not None else _affine_maps(inputs, rank)
    maps.append(ir.AffineMap.get_identity(rank))
    init = tensor.empty(result.shape, result.element_type)
    parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
    op = linalg.GenericOp([result_type], list(inputs), [init],
                          ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                          ir.ArrayAttr.get([parallel] * rank))
    block = op.regions[0].blocks.append(*[element_type(v) for v in inputs], result.element_type)
    with ir.InsertionPoint(block):
        linalg.yield_([body(*block.arguments[:len(inputs)])])
    return op.result


def elementwise(body: Body) -> Rule:
    """A rule applying ``body`` to the operands elementwise (rank-0 operands broadcast)."""
    return lambda op: generic(list(op.operands), op.results[0].type, body)


def loop_nest(shape: Sequence[int], init: ir.Value,
               body: Callable[[list[ir.Value], ir.Value], ir.Value]) -> ir.Value:
    """Nested scf.for loops over ``shape`` (the last dimension innermost) carrying one tensor,
    ``body(indices, tensor)`` giving its next value."""
    index = ir.IndexType.get()
    zero, one = arith.constant(index, 0), arith.constant(index, 1)
    indices: list[ir.Value] = []

    def build(d: int, carried: ir.Value) -> ir.Value:
        if d == len(shape):
            return body(list(indices), carried)
        loop = scf.ForOp(zero, arith.constant(index, shape[d]), one, [carried])
        with ir.InsertionPoint(loop.body):
            indices.append(loop.induction_variable)
            scf.yield_([build(d + 1, loop.inner_iter_args[0])])
            indices.pop()
        return loop.results[0]

    return build(0, init)
