"""Rules for the decompositions: calls to LAPACK (`?potrf`, `?getrf`) and CBLAS (`?trsm`).

LAPACK works in place, so each rule copies its operands into fresh buffers (`memref.alloc`
and `bufferization.materialize_in_destination`, see `_copy`), calls the routine on every
matrix of the flattened batch in an scf.for (a pointer at each matrix's offset), and returns
the buffer as a tensor (`bufferization.to_tensor restrict writable`). The calls are to private declarations
`@mlax_spotrf`, `@mlax_dgetrf`, `@mlax_strsm`, ... with the C interfaces' signatures (LP64:
i32 integers, scalars by value), which the CPU runtime binds to SciPy's OpenBLAS
(mlax.runtime.lapack). trsm's matrix is copied too, so no call reads a buffer bufferization
does not know it reads.

Row-major layout: a row-major matrix is its transpose in column-major, so cholesky calls
`?potrf` column-major on the upper triangle (the lower one of the row-major matrix), whose
factor U = L^T reads back row-major as L; trsm takes CblasRowMajor itself; getrf takes
LAPACK_ROW_MAJOR (LAPACKE transposes). After the calls, a linalg.generic gives jax's values:
cholesky makes the lower triangle of a matrix whose `info != 0` NaN and zeroes every upper
triangle (LAPACK leaves the input there); lu makes a matrix NaN where `info < 0` (never for
valid arguments) and turns LAPACK's 1-based pivots 0-based, and the permutation is those
swaps applied to an iota (scf loops on the buffer, per matrix). Empty matrices make no calls.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from mlir import ir
from mlir.dialects import arith, bufferization, func, llvm, memref, scf, tensor
from mlir.dialects import complex as cplx

from mlax.dialect.opviews import linalg
from mlax.passes.lower_to_linalg.common import Rule, generic, reassociation, scalar
from mlax.passes.symbols import declare_function

_ROW_MAJOR, _COL_MAJOR = 101, 102
_NO_TRANS, _TRANS, _CONJ_TRANS = 111, 112, 113
_UPPER, _LOWER, _NON_UNIT, _UNIT, _LEFT, _RIGHT = 121, 122, 131, 132, 141, 142


def _i32(value: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(32), value)


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def _prefix(element: ir.Type) -> str:
    """The BLAS/LAPACK type letter of an f32, f64, complex<f32> or complex<f64> element."""
    if isinstance(element, ir.ComplexType):
        return "c" if ir.FloatType(element.element_type).width == 32 else "z"
    return "s" if ir.FloatType(element).width == 32 else "d"


def _nan(element: ir.Type) -> ir.Value:
    """NaN of a float or complex element type (NaN in both parts, as jax's failed factors)."""
    return scalar(element, complex(math.nan, math.nan) if isinstance(element, ir.ComplexType) else math.nan)


def _declare(op: ir.Operation, name: str, inputs: Sequence[ir.Type], results: Sequence[ir.Type]) -> str:
    module = op
    while module.name != "builtin.module":
        module = module.parent
    declare_function(module, name, ir.FunctionType.get(list(inputs), list(results)))
    return name


def _fold(x: ir.Value, trailing: int) -> ir.Value:
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


def _unfold(x: ir.Value, result_type: ir.Type) -> ir.Value:
    """The inverse of `_fold`: ``x`` back to ``result_type``'s shape."""
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


def _memref_type(t: ir.Type) -> ir.MemRefType:
    tensor_type = ir.RankedTensorType(t)
    return ir.MemRefType.get(list(tensor_type.shape), tensor_type.element_type)


def _address(buffer: ir.Value) -> ir.Value:
    return arith.index_cast(ir.IntegerType.get_signless(64), memref.extract_aligned_pointer_as_index(buffer))


def _at(base: ir.Value, matrix: ir.Value, stride_bytes: int) -> ir.Value:
    """The pointer to matrix number ``matrix`` (an index) of a buffer at address ``base``."""
    i64 = ir.IntegerType.get_signless(64)
    offset = arith.muli(arith.index_cast(i64, matrix), arith.constant(i64, stride_bytes))
    return llvm.inttoptr(llvm.PointerType.get(), arith.addi(base, offset))


def _bytes(t: ir.Type) -> int:
    """The size of one matrix (the trailing dimensions) of a folded tensor type, in bytes."""
    tensor_type = ir.RankedTensorType(t)
    element = tensor_type.element_type
    if isinstance(element, ir.ComplexType):
        bits = 2 * ir.FloatType(element.element_type).width
    elif isinstance(element, ir.IntegerType):
        bits = ir.IntegerType(element).width
    else:
        bits = ir.FloatType(element).width
    return math.prod(tensor_type.shape[1:]) * bits // 8


def _copy(x: ir.Value) -> ir.Value:
    """A fresh buffer holding the tensor ``x``: `bufferization.materialize_in_destination`, which
    reads ``x`` where it stands and, writing memory, is never merged with another by cse (two
    `to_buffer`s of one tensor would be, and bufferization could then overwrite the tensor
    between the merged read and the library call)."""
    buffer = memref.alloc(_memref_type(x.type), [], [])
    bufferization.materialize_in_destination(None, x, buffer, restrict=True, writable=True)
    return buffer


def _for_each(count: int, body: Callable[[ir.Value], None]) -> None:
    """``body(i)`` for i in 0 .. count-1 (an scf.for; no loop for one)."""
    if count == 1:
        body(_index(0))
        return
    loop = scf.ForOp(_index(0), _index(count), _index(1))
    with ir.InsertionPoint(loop.body):
        body(loop.induction_variable)
        scf.YieldOp([])


def _as_tensor(buffer: ir.Value) -> ir.Value:
    t = ir.MemRefType(buffer.type)
    return bufferization.to_tensor(ir.RankedTensorType.get(t.shape, t.element_type), buffer, restrict=True,
                                   writable=True)


def _per_matrix_maps(rank: int) -> list[ir.AffineMap]:
    """A matrix-shaped operand and one value per matrix (indexed by the folded batch)."""
    return [ir.AffineMap.get_identity(rank), ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(0)])]


def _cholesky(op: ir.Operation) -> ir.Value:
    (operand,), result_type = op.operands, op.results[0].type
    if 0 in ir.RankedTensorType(result_type).shape:
        return operand
    x = _fold(operand, 2)
    count, n, _ = ir.RankedTensorType(x.type).shape
    element = ir.RankedTensorType(x.type).element_type
    i32, i8 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8)
    symbol = _declare(op, f"mlax_{_prefix(element)}potrf", [i32, i8, i32, llvm.PointerType.get(), i32], [i32])
    info = memref.alloc(ir.MemRefType.get([count], i32), [], [])

    factor = _copy(x)
    base = _address(factor)
    fixed = [_i32(_COL_MAJOR), arith.constant(i8, ord("U")), _i32(n)]

    def one(matrix: ir.Value) -> None:
        pointer = _at(base, matrix, _bytes(x.type))
        (status,) = func.CallOp([i32], symbol, [*fixed, pointer, _i32(n)]).results
        memref.store(status, info, [matrix])

    _for_each(count, one)

    def clean(value: ir.Value, status: ir.Value) -> ir.Value:
        above = arith.cmpi(arith.CmpIPredicate.ugt, linalg.IndexOp(2).result, linalg.IndexOp(1).result)
        failed = arith.cmpi(arith.CmpIPredicate.ne, status, _i32(0))
        value = arith.select(failed, _nan(element), value)
        return arith.select(above, scalar(element, 0.0), value)

    cleaned = generic([_as_tensor(factor), _as_tensor(info)], x.type, clean, _per_matrix_maps(3))
    return _unfold(cleaned, result_type)


def _flag(op: ir.Operation, name: str) -> bool:
    return bool(ir.BoolAttr(op.attributes[name]).value)


def _scalar_argument(element: ir.Type, value: float) -> tuple[ir.Type, ir.Value]:
    """CBLAS's type and value of a scalar argument: by value for real types, through a pointer to
    a one-element buffer for complex ones."""
    if not isinstance(element, ir.ComplexType):
        return element, scalar(element, value)
    cell = memref.alloc(ir.MemRefType.get([1], element), [], [])
    memref.store(scalar(element, value), cell, [_index(0)])
    return llvm.PointerType.get(), llvm.inttoptr(llvm.PointerType.get(), _address(cell))


def _triangular_solve(op: ir.Operation) -> ir.Value:
    (a_operand, b_operand), result_type = op.operands, op.results[0].type
    if 0 in ir.RankedTensorType(result_type).shape:
        return b_operand
    a, b = _fold(a_operand, 2), _fold(b_operand, 2)
    count, rows, cols = ir.RankedTensorType(b.type).shape
    size = ir.RankedTensorType(a.type).shape[-1]
    element = ir.RankedTensorType(b.type).element_type
    transpose, conjugate = _flag(op, "transpose_a"), _flag(op, "conjugate_a")
    conjugate = conjugate and isinstance(element, ir.ComplexType)
    if conjugate and not transpose:  # CBLAS conjugates only with the transpose: conj(A) first
        a = generic([a], a.type, cplx.conj)
    i32, pointer = ir.IntegerType.get_signless(32), llvm.PointerType.get()
    alpha_type, alpha = _scalar_argument(element, 1.0)
    symbol = _declare(op, f"mlax_{_prefix(element)}trsm",
                      [i32] * 7 + [alpha_type, pointer, i32, pointer, i32], [])
    trans = (_CONJ_TRANS if conjugate else _TRANS) if transpose else _NO_TRANS
    flags = [_ROW_MAJOR, _LEFT if _flag(op, "left_side") else _RIGHT,
             _LOWER if _flag(op, "lower") else _UPPER, trans,
             _UNIT if _flag(op, "unit_diagonal") else _NON_UNIT, rows, cols]

    solution = _copy(b)
    a_base, b_base = _address(_copy(a)), _address(solution)
    fixed = [_i32(f) for f in flags] + [alpha]

    def one(matrix: ir.Value) -> None:
        func.CallOp([], symbol, [*fixed, _at(a_base, matrix, _bytes(a.type)), _i32(size),
                                 _at(b_base, matrix, _bytes(b.type)), _i32(cols)])

    _for_each(count, one)
    return _unfold(_as_tensor(solution), result_type)


def _iota_permutation(perm: ir.Value, pivots: ir.Value, matrix: ir.Value, rows: int, swaps: int) -> None:
    """perm[matrix] = 0 .. rows-1, then for i < swaps: swap perm[matrix, i] and
    perm[matrix, pivots[matrix, i] - 1] (LAPACK's 1-based pivots)."""
    i32 = ir.IntegerType.get_signless(32)
    fill = scf.ForOp(_index(0), _index(rows), _index(1))
    with ir.InsertionPoint(fill.body):
        i = fill.induction_variable
        memref.store(arith.index_cast(i32, i), perm, [matrix, i])
        scf.YieldOp([])
    swap = scf.ForOp(_index(0), _index(swaps), _index(1))
    with ir.InsertionPoint(swap.body):
        i = swap.induction_variable
        j = arith.index_cast(ir.IndexType.get(), arith.subi(memref.load(pivots, [matrix, i]), _i32(1)))
        at_i, at_j = memref.load(perm, [matrix, i]), memref.load(perm, [matrix, j])
        memref.store(at_j, perm, [matrix, i])
        memref.store(at_i, perm, [matrix, j])
        scf.YieldOp([])


def _lu(op: ir.Operation) -> ir.Value:
    (operand,) = op.operands
    factors_type, pivots_type, perm_type = (r.type for r in op.results)
    x = _fold(operand, 2)
    count, rows, cols = ir.RankedTensorType(x.type).shape
    element = ir.RankedTensorType(x.type).element_type
    i32, pointer = ir.IntegerType.get_signless(32), llvm.PointerType.get()
    k = min(rows, cols)
    pivots = memref.alloc(ir.MemRefType.get([count, k], i32), [], [])
    perm = memref.alloc(ir.MemRefType.get([count, rows], i32), [], [])
    info = memref.alloc(ir.MemRefType.get([count], i32), [], [])
    symbol = _declare(op, f"mlax_{_prefix(element)}getrf", [i32, i32, i32, pointer, i32, pointer], [i32])

    factors = _copy(x)
    base, pivots_base = _address(factors), _address(pivots)

    def one(matrix: ir.Value) -> None:
        status = _i32(0)
        if k:
            (status,) = func.CallOp([i32], symbol, [
                _i32(_ROW_MAJOR), _i32(rows), _i32(cols), _at(base, matrix, _bytes(x.type)), _i32(cols),
                _at(pivots_base, matrix, 4 * k)]).results
        memref.store(status, info, [matrix])
        _iota_permutation(perm, pivots, matrix, rows, k)

    if count:
        _for_each(count, one)

    def clean(value: ir.Value, status: ir.Value) -> ir.Value:
        failed = arith.cmpi(arith.CmpIPredicate.slt, status, _i32(0))
        return arith.select(failed, _nan(element), value)

    cleaned = generic([_as_tensor(factors), _as_tensor(info)], x.type, clean, _per_matrix_maps(3))
    zero_based = generic([_as_tensor(pivots)], ir.RankedTensorType.get([count, k], i32),
                         lambda p: arith.subi(p, _i32(1)))
    op.results[1].replace_all_uses_with(_unfold(zero_based, pivots_type))
    op.results[2].replace_all_uses_with(_unfold(_as_tensor(perm), perm_type))
    return _unfold(cleaned, factors_type)


RULES: dict[str, Rule] = {
    "cholesky": _cholesky,
    "triangular_solve": _triangular_solve,
    "lu": _lu,
}
