"""Rule for schur: LAPACKE `?gees` per matrix (jobvs 'V' or 'N', no sorting), NaN where it failed.

As the other decompositions (decompositions.py: the operand copied into a fresh buffer, one call
per matrix of the flattened batch in an scf.for), with LAPACK_ROW_MAJOR: LAPACKE transposes
around the column-major routine and makes the workspace query itself, so the matrices jaxlib's
kernel gets are the same and so are T and Z. `select` is a null pointer (sort 'N' never calls
it); the eigenvalues (wr, wi for a real matrix, w for a complex one) and `sdim` go to scratch
buffers. The Schur vectors are computed only if the op asks for them (otherwise into one n x n
scratch matrix for every call: LAPACKE's row-major check wants ldvs >= n even then). One
linalg.generic per result makes a matrix NaN where `info != 0`.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func, llvm, memref

from mlax.passes.lower_to_linalg.common import Rule, generic
from mlax.passes.lower_to_linalg.library_calls import (
    ROW_MAJOR,
    address,
    as_tensor,
    bool_attr,
    declare,
    fold_batch,
    for_each_matrix,
    fresh_copy,
    int32,
    matrix_bytes,
    nan_scalar,
    per_matrix_maps,
    pointer_at,
    type_letter,
    unfold_batch,
)


def _nan_where_failed(matrices: ir.Value, info: ir.Value) -> ir.Value:
    element = ir.RankedTensorType(matrices.type).element_type

    def body(value: ir.Value, status: ir.Value) -> ir.Value:
        failed = arith.cmpi(arith.CmpIPredicate.ne, status, int32(0))
        return arith.select(failed, nan_scalar(element), value)

    return generic([matrices, info], matrices.type, body, per_matrix_maps(3))


def _schur(op: ir.Operation) -> ir.Value:
    (operand,) = op.operands
    x = fold_batch(operand, 2)
    count, n, _ = ir.RankedTensorType(x.type).shape
    element = ir.RankedTensorType(x.type).element_type
    vectors = bool_attr(op, "compute_schur_vectors")
    values_count = 1 if isinstance(element, ir.ComplexType) else 2  # w, or wr and wi
    i32, i8, pointer = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8), llvm.PointerType.get()
    symbol = declare(op, f"mlax_{type_letter(element)}gees",
                     [i32, i8, i8, pointer, i32, pointer, i32, pointer, *[pointer] * values_count, pointer,
                      i32], [i32])

    matrix = fresh_copy(x)
    values = [memref.alloc(ir.MemRefType.get([max(n, 1)], element), [], []) for _ in range(values_count)]
    schur_vectors = memref.alloc(ir.MemRefType.get([count if vectors else 1, n, n], element), [], [])
    sdim = memref.alloc(ir.MemRefType.get([1], i32), [], [])
    info = memref.alloc(ir.MemRefType.get([count], i32), [], [])
    size = matrix_bytes(x.type)
    matrix_base, vectors_base = address(matrix), address(schur_vectors)
    scratch = [llvm.inttoptr(pointer, address(b)) for b in (sdim, *values)]
    jobvs, sort = (arith.constant(i8, ord(c)) for c in ("V" if vectors else "N", "N"))
    no_select = llvm.mlir_zero(pointer)

    def one(k: ir.Value) -> None:
        a = pointer_at(matrix_base, k, size)
        vs = pointer_at(vectors_base, k, size if vectors else 0)
        arguments = [int32(ROW_MAJOR), jobvs, sort, no_select, int32(n), a, int32(n), *scratch, vs, int32(n)]
        (status,) = func.CallOp([i32], symbol, arguments).results
        memref.store(status, info, [k])

    if count and n:
        for_each_matrix(count, one)
    info_tensor = as_tensor(info)
    outs = [_nan_where_failed(as_tensor(matrix), info_tensor)]
    if vectors:
        outs.append(_nan_where_failed(as_tensor(schur_vectors), info_tensor))
    outs = [unfold_batch(v, r.type) for v, r in zip(outs, op.results, strict=True)]
    for result, replacement in zip(op.results[1:], outs[1:], strict=True):
        result.replace_all_uses_with(replacement)
    return outs[0]


RULES: dict[str, Rule] = {"schur": _schur}
