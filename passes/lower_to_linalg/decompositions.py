"""Rules for the decompositions: calls to LAPACK (`?potrf`, `?getrf`) and CBLAS (`?trsm`).

LAPACK works in place, so each rule copies its operands into fresh buffers (`memref.alloc`
and `bufferization.materialize_in_destination`, see `fresh_copy`), calls the routine on every
matrix of the flattened batch in an scf.for (a pointer at each matrix's offset), and returns
the buffer as a tensor (`bufferization.to_tensor restrict writable`). The calls are to private declarations
`@mlax_spotrf`, `@mlax_dgetrf`, `@mlax_strsm`, ... with the C interfaces' signatures (LP64:
i32 integers, scalars by value), which the CPU runtime binds to SciPy's OpenBLAS
(mlax.backends.native.lapack). trsm's matrix is copied too, so no call reads a buffer bufferization
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

from mlir import ir
from mlir.dialects import arith, func, llvm, memref, scf
from mlir.dialects import complex as cplx

from mlax.dialect.opviews import linalg
from mlax.passes.lower_to_linalg.common import Rule, generic, scalar
from mlax.passes.lower_to_linalg.library_calls import (
    COL_MAJOR,
    CONJ_TRANS,
    LEFT,
    LOWER,
    NO_TRANS,
    NON_UNIT,
    RIGHT,
    ROW_MAJOR,
    TRANS,
    UNIT,
    UPPER,
    address,
    as_tensor,
    bool_attr,
    cblas_scalar,
    declare,
    fold_batch,
    for_each_matrix,
    fresh_copy,
    index_constant,
    int32,
    matrix_bytes,
    nan_scalar,
    per_matrix_maps,
    pointer_at,
    type_letter,
    unfold_batch,
)


def _cholesky(op: ir.Operation) -> ir.Value:
    (operand,), result_type = op.operands, op.results[0].type
    if 0 in ir.RankedTensorType(result_type).shape:
        return operand
    x = fold_batch(operand, 2)
    count, n, _ = ir.RankedTensorType(x.type).shape
    element = ir.RankedTensorType(x.type).element_type
    i32, i8 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8)
    pointer = llvm.PointerType.get()
    symbol = declare(op, f"mlax_{type_letter(element)}potrf", [i32, i8, i32, pointer, i32], [i32])
    info = memref.alloc(ir.MemRefType.get([count], i32), [], [])

    factor = fresh_copy(x)
    base = address(factor)
    fixed = [int32(COL_MAJOR), arith.constant(i8, ord("U")), int32(n)]

    def one(matrix: ir.Value) -> None:
        pointer = pointer_at(base, matrix, matrix_bytes(x.type))
        (status,) = func.CallOp([i32], symbol, [*fixed, pointer, int32(n)]).results
        memref.store(status, info, [matrix])

    for_each_matrix(count, one)

    def clean(value: ir.Value, status: ir.Value) -> ir.Value:
        above = arith.cmpi(arith.CmpIPredicate.ugt, linalg.IndexOp(2).result, linalg.IndexOp(1).result)
        failed = arith.cmpi(arith.CmpIPredicate.ne, status, int32(0))
        value = arith.select(failed, nan_scalar(element), value)
        return arith.select(above, scalar(element, 0.0), value)

    cleaned = generic([as_tensor(factor), as_tensor(info)], x.type, clean, per_matrix_maps(3))
    return unfold_batch(cleaned, result_type)


def _triangular_solve(op: ir.Operation) -> ir.Value:
    (a_operand, b_operand), result_type = op.operands, op.results[0].type
    if 0 in ir.RankedTensorType(result_type).shape:
        return b_operand
    a, b = fold_batch(a_operand, 2), fold_batch(b_operand, 2)
    count, rows, cols = ir.RankedTensorType(b.type).shape
    size = ir.RankedTensorType(a.type).shape[-1]
    element = ir.RankedTensorType(b.type).element_type
    transpose, conjugate = bool_attr(op, "transpose_a"), bool_attr(op, "conjugate_a")
    conjugate = conjugate and isinstance(element, ir.ComplexType)
    if conjugate and not transpose:  # CBLAS conjugates only with the transpose: conj(A) first
        a = generic([a], a.type, cplx.conj)
    i32, pointer = ir.IntegerType.get_signless(32), llvm.PointerType.get()
    alpha_type, alpha = cblas_scalar(element, 1.0)
    symbol = declare(op, f"mlax_{type_letter(element)}trsm",
                      [i32] * 7 + [alpha_type, pointer, i32, pointer, i32], [])
    trans = (CONJ_TRANS if conjugate else TRANS) if transpose else NO_TRANS
    flags = [ROW_MAJOR, LEFT if bool_attr(op, "left_side") else RIGHT,
             LOWER if bool_attr(op, "lower") else UPPER, trans,
             UNIT if bool_attr(op, "unit_diagonal") else NON_UNIT, rows, cols]

    solution = fresh_copy(b)
    a_base, b_base = address(fresh_copy(a)), address(solution)
    fixed = [int32(f) for f in flags] + [alpha]

    def one(matrix: ir.Value) -> None:
        func.CallOp([], symbol, [*fixed, pointer_at(a_base, matrix, matrix_bytes(a.type)), int32(size),
                                 pointer_at(b_base, matrix, matrix_bytes(b.type)), int32(cols)])

    for_each_matrix(count, one)
    return unfold_batch(as_tensor(solution), result_type)


def _iota_permutation(perm: ir.Value, pivots: ir.Value, matrix: ir.Value, rows: int, swaps: int) -> None:
    """perm[matrix] = 0 .. rows-1, then for i < swaps: swap perm[matrix, i] and
    perm[matrix, pivots[matrix, i] - 1] (LAPACK's 1-based pivots)."""
    i32 = ir.IntegerType.get_signless(32)
    fill = scf.ForOp(index_constant(0), index_constant(rows), index_constant(1))
    with ir.InsertionPoint(fill.body):
        i = fill.induction_variable
        memref.store(arith.index_cast(i32, i), perm, [matrix, i])
        scf.YieldOp([])
    swap = scf.ForOp(index_constant(0), index_constant(swaps), index_constant(1))
    with ir.InsertionPoint(swap.body):
        i = swap.induction_variable
        j = arith.index_cast(ir.IndexType.get(), arith.subi(memref.load(pivots, [matrix, i]), int32(1)))
        at_i, at_j = memref.load(perm, [matrix, i]), memref.load(perm, [matrix, j])
        memref.store(at_j, perm, [matrix, i])
        memref.store(at_i, perm, [matrix, j])
        scf.YieldOp([])


def _lu(op: ir.Operation) -> ir.Value:
    (operand,) = op.operands
    factors_type, pivots_type, perm_type = (r.type for r in op.results)
    x = fold_batch(operand, 2)
    count, rows, cols = ir.RankedTensorType(x.type).shape
    element = ir.RankedTensorType(x.type).element_type
    i32, pointer = ir.IntegerType.get_signless(32), llvm.PointerType.get()
    k = min(rows, cols)
    pivots = memref.alloc(ir.MemRefType.get([count, k], i32), [], [])
    perm = memref.alloc(ir.MemRefType.get([count, rows], i32), [], [])
    info = memref.alloc(ir.MemRefType.get([count], i32), [], [])
    symbol = declare(op, f"mlax_{type_letter(element)}getrf", [i32, i32, i32, pointer, i32, pointer], [i32])

    factors = fresh_copy(x)
    base, pivots_base = address(factors), address(pivots)

    def one(matrix: ir.Value) -> None:
        status = int32(0)
        if k:
            (status,) = func.CallOp([i32], symbol, [
                int32(ROW_MAJOR), int32(rows), int32(cols),
                pointer_at(base, matrix, matrix_bytes(x.type)), int32(cols),
                pointer_at(pivots_base, matrix, 4 * k)]).results
        memref.store(status, info, [matrix])
        _iota_permutation(perm, pivots, matrix, rows, k)

    if count:
        for_each_matrix(count, one)

    def clean(value: ir.Value, status: ir.Value) -> ir.Value:
        failed = arith.cmpi(arith.CmpIPredicate.slt, status, int32(0))
        return arith.select(failed, nan_scalar(element), value)

    cleaned = generic([as_tensor(factors), as_tensor(info)], x.type, clean, per_matrix_maps(3))
    zero_based = generic([as_tensor(pivots)], ir.RankedTensorType.get([count, k], i32),
                         lambda p: arith.subi(p, int32(1)))
    op.results[1].replace_all_uses_with(unfold_batch(zero_based, pivots_type))
    op.results[2].replace_all_uses_with(unfold_batch(as_tensor(perm), perm_type))
    return unfold_batch(cleaned, factors_type)


RULES: dict[str, Rule] = {
    "cholesky": _cholesky,
    "triangular_solve": _triangular_solve,
    "lu": _lu,
}
