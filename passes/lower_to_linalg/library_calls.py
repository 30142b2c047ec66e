"""What every rule that calls a C library (LAPACK, CBLAS, MKL's DFTI) from the CPU backend needs.

The libraries work in place on column- or row-major matrices, so a rule folds the batch
dimensions into one (`fold_batch`), copies each operand into a fresh buffer (`fresh_copy`),
declares the routine (`declare`: a private `@mlax_<routine>` the CPU runtime binds), calls it on
every matrix at its byte offset (`for_each_matrix`, `pointer_at`) and reads the buffer back
as a tensor (`as_tensor`, `unfold_batch`). CBLAS's enum values are the C headers'.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from mlir import ir
from mlir.dialects import arith, bufferization, func, llvm, memref, scf, tensor

from mlax.passes.lower_to_linalg.common import reassociation, scalar
from mlax.passes.symbols import declare_function

ROW_MAJOR, COL_MAJOR = 101, 102
NO_TRANS, TRANS, CONJ_TRANS = 111, 112, 113
UPPER, LOWER, NON_UNIT, UNIT, LEFT, RIGHT = 121, 122, 131, 132, 141, 142


def int32(value: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(32), value)


def index_constant(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def type_letter(element: ir.Type) -> str:
    """The BLAS/LAPACK type letter of an f32, f64, complex<f32> or complex<f64> element."""
    if isinstance(element, ir.ComplexType):
        return "c" if ir.FloatType(element.element_type).width == 32 else "z"
    return "s" if ir.FloatType(element).width == 32 else "d"


def nan_scalar(element: ir.Type) -> ir.Value:
    """NaN of a float or complex element type (NaN in both parts, as jax's failed factors)."""
    return scalar(element, complex(math.nan, math.nan) if isinstance(element, ir.ComplexType) else math.nan)


def declare(op: ir.Operation, name: str, inputs: Sequence[ir.Type], results: Sequence[ir.Type]) -> str:
    module = op
    while module.name != "builtin.module":
        module = module.parent
    declare_function(module, name, ir.FunctionType.get(list(inputs), list(results)))
    return name


def fold_batch(x: ir.Value, trailing: int) -> ir.Value:
    """``x`` with its leading dimensions (all but ``trailing``) folded into one (added if none)."""
    t = ir.RankedTensorType(x.type)
    lead = t.rank - trailing
    shape = [math.prod(t.shape[:lead]), *t.shape[lead:]]
    folded = ir.RankedTensorType.get(shape, t.element_type)
    if lead == 1:
        return x
    if lead == 0:
        return tensor.expand_shape(folded, x, reassociation([[0, 1], *[[d + 1] for d in range(1, trailing)]]),
                                   [], shape)
    return tensor.collapse_shape(folded, x, reassociation([list(range(lead)),
                                                           *[[lead + d] for d in range(trailing)]]))


def unfold_batch(x: ir.Value, result_type: ir.Type) -> ir.Value:
    """The inverse of `fold_batch`: ``x`` back to ``result_type``'s shape."""
    t, result = ir.RankedTensorType(x.type), ir.RankedTensorType(result_type)
    trailing = t.rank - 1
    lead = result.rank - trailing
    if lead == 1:
        return x
    if lead == 0:
        groups = reassociation([[0, 1], *[[d + 1] for d in range(1, trailing)]])
        return tensor.collapse_shape(result, x, groups)
    groups = reassociation([list(range(lead)), *[[lead + d] for d in range(trailing)]])
    return tensor.expand_shape(result, x, groups, [], list(result.shape))


def buffer_type(t: ir.Type) -> ir.MemRefType:
    tensor_type = ir.RankedTensorType(t)
    return ir.MemRefType.get(list(tensor_type.shape), tensor_type.element_type)


def address(buffer: ir.Value) -> ir.Value:
    return arith.index_cast(ir.IntegerType.get_signless(64), memref.extract_aligned_pointer_as_index(buffer))


def pointer_at(base: ir.Value, matrix: ir.Value, stride_bytes: int) -> ir.Value:
    """The pointer to matrix number ``matrix`` (an index) of a buffer at address ``base``."""
    i64 = ir.IntegerType.get_signless(64)
    offset = arith.muli(arith.index_cast(i64, matrix), arith.constant(i64, stride_bytes))
    return llvm.inttoptr(llvm.PointerType.get(), arith.addi(base, offset))


def element_bytes(element: ir.Type) -> int:
    """The size of one element (a complex one is its two parts side by side) in bytes."""
    if isinstance(element, ir.ComplexType):
        return 2 * ir.FloatType(element.element_type).width // 8
    if isinstance(element, ir.IntegerType):
        return ir.IntegerType(element).width // 8
    return ir.FloatType(element).width // 8


def matrix_bytes(t: ir.Type) -> int:
    """The size of one matrix (the trailing dimensions) of a folded tensor type, in bytes."""
    tensor_type = ir.RankedTensorType(t)
    return math.prod(tensor_type.shape[1:]) * element_bytes(tensor_type.element_type)


def fresh_copy(x: ir.Value) -> ir.Value:
    """A fresh buffer holding the tensor ``x``: `bufferization.materialize_in_destination`, which
    reads ``x`` where it stands and, writing memory, is never merged with another by cse (two
    `to_buffer`s of one tensor would be, and bufferization could then overwrite the tensor
    between the merged read and the library call)."""
    buffer = memref.alloc(buffer_type(x.type), [], [])
    bufferization.materialize_in_destination(None, x, buffer, restrict=True, writable=True)
    return buffer


def for_each_matrix(count: int, body: Callable[[ir.Value], None]) -> None:
    """``body(i)`` for i in 0 .. count-1 (an scf.for; no loop for one)."""
    if count == 1:
        body(index_constant(0))
        return
    loop = scf.ForOp(index_constant(0), index_constant(count), index_constant(1))
    with ir.InsertionPoint(loop.body):
        body(loop.induction_variable)
        scf.YieldOp([])


def as_tensor(buffer: ir.Value) -> ir.Value:
    t = ir.MemRefType(buffer.type)
    return bufferization.to_tensor(ir.RankedTensorType.get(t.shape, t.element_type), buffer, restrict=True,
                                   writable=True)


def per_matrix_maps(rank: int) -> list[ir.AffineMap]:
    """A matrix-shaped operand and one value per matrix (indexed by the folded batch)."""
    return [ir.AffineMap.get_identity(rank), ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(0)])]


def cblas_scalar(element: ir.Type, value: float) -> tuple[ir.Type, ir.Value]:
    """CBLAS's type and value of a scalar argument: by value for real types, through a pointer to
    a one-element buffer for complex ones."""
    if not isinstance(element, ir.ComplexType):
        return element, scalar(element, value)
    cell = memref.alloc(ir.MemRefType.get([1], element), [], [])
    memref.store(scalar(element, value), cell, [index_constant(0)])
    return llvm.PointerType.get(), llvm.inttoptr(llvm.PointerType.get(), address(cell))


def bool_attr(op: ir.Operation, name: str) -> bool:
    return bool(ir.BoolAttr(op.attributes[name]).value)


def status_if_finite(op: ir.Operation, element: ir.Type, rows: int, columns: int, matrix: ir.Value,
                     call: Callable[[], ir.Value]) -> ir.Value:
    """``call()``'s i32 status when the row-major matrix at ``matrix`` holds no NaN or infinity
    (its ?lange 'M' norm is below +inf), else -4 without calling: as jaxlib, for the routines
    that never return (?gesdd) or report illegal arguments of their inner routines (?geev) on
    such input. Their results are NaN where the status is not 0."""
    i32, i8 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8)
    part = ir.ComplexType(element).element_type if isinstance(element, ir.ComplexType) else element
    lange = declare(op, f"mlax_{type_letter(element)}lange", [i32, i8, i32, i32, llvm.PointerType.get(), i32],
                    [part])
    (norm,) = func.CallOp([part], lange, [int32(ROW_MAJOR), arith.constant(i8, ord("M")), int32(rows),
                                          int32(columns), matrix, int32(columns)]).results
    finite = arith.cmpf(arith.CmpFPredicate.OLT, norm, scalar(part, math.inf))
    guarded = scf.IfOp(finite, [i32], has_else=True)
    with ir.InsertionPoint(guarded.then_block):
        scf.YieldOp([call()])
    with ir.InsertionPoint(guarded.else_block):
        scf.YieldOp([int32(-4)])
    return guarded.results[0]
