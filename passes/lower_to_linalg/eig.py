"""Rule for eig: LAPACKE `?geev` per matrix, then its real storage unpacked into complex values.

As the other decompositions (decompositions.py: the operand copied into a fresh buffer, one call
per matrix of the flattened batch in an scf.for), with LAPACK_ROW_MAJOR (LAPACKE transposes). For
a real matrix `?geev` returns the eigenvalues as real and imaginary parts (`wr`, `wi`) and the
eigenvectors as real columns, a conjugate pair j, j+1 (wi[j] > 0) stored as the real part in column
j and the imaginary part in column j+1; one linalg.generic per result rebuilds the complex values
(tensor.extract at the partner column) and makes a matrix NaN where `info != 0`, as jaxlib does.
A complex matrix calls `?geev` of its type, whose results are complex already (only the NaN
clean-up follows). Each eigenvector set is computed only if the op asks for it (jobvl/jobvr 'N'
otherwise, with a 1x1 dummy buffer).
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, func, llvm, memref, tensor
from mlir.dialects import complex as cplx

from mlax.dialect.opviews import linalg
from mlax.passes.lower_to_linalg.common import Rule, generic, scalar
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
    per_matrix_maps,
    pointer_at,
    status_if_finite,
    type_letter,
    unfold_batch,
)


def _nan_unless_ok(value: ir.Value, status: ir.Value) -> ir.Value:
    failed = arith.cmpi(arith.CmpIPredicate.ne, status, int32(0))
    return arith.select(failed, scalar(value.type, complex(math.nan, math.nan)), value)


def _unpack(packed: ir.Value, wi: ir.Value, info: ir.Value, result_type: ir.Type) -> ir.Value:
    """The complex eigenvectors (count, n, n) of ``packed`` (geev's real columns)."""
    element = ir.RankedTensorType(result_type).element_type
    index = ir.IndexType.get()
    one = arith.constant(index, 1)

    def body(status: ir.Value) -> ir.Value:
        b, r, c = (linalg.IndexOp(d).result for d in range(3))
        imag = tensor.extract(wi, [b, c])
        zero = scalar(imag.type, 0.0)
        first = arith.cmpf(arith.CmpFPredicate.OGT, imag, zero)  # v_c = P[:, c] + i P[:, c+1]
        second = arith.cmpf(arith.CmpFPredicate.OLT, imag, zero)  # v_c = P[:, c-1] - i P[:, c]
        real_col = arith.select(second, arith.subi(c, one), c)
        imag_col = arith.select(first, arith.addi(c, one), c)
        re = tensor.extract(packed, [b, r, real_col])
        im = tensor.extract(packed, [b, r, imag_col])
        im = arith.select(first, im, arith.select(second, arith.negf(im), zero))
        return _nan_unless_ok(cplx.create_(element, re, im), status)

    return generic([info], result_type, body, [per_matrix_maps(3)[1]])


def _eig(op: ir.Operation) -> ir.Value:
    (operand,) = op.operands
    x = fold_batch(operand, 2)
    count, n, _ = ir.RankedTensorType(x.type).shape
    operand_element = ir.RankedTensorType(x.type).element_type
    real_input = not isinstance(operand_element, ir.ComplexType)
    element = ir.RankedTensorType(op.results[0].type).element_type
    left, right = bool_attr(op, "compute_left_eigenvectors"), bool_attr(op, "compute_right_eigenvectors")
    i32, i8, pointer = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8), llvm.PointerType.get()
    values_count = 2 if real_input else 1  # wr and wi, or w
    symbol = declare(op, f"mlax_{type_letter(operand_element)}geev",
                      [i32, i8, i8, i32, pointer, i32, *[pointer] * values_count, pointer, i32, pointer, i32],
                      [i32])

    def buffer(shape: list[int]) -> ir.Value:
        return memref.alloc(ir.MemRefType.get(shape, operand_element), [], [])

    matrix = fresh_copy(x)
    values = [buffer([count, n]) for _ in range(values_count)]
    vl, vr = (buffer([count, n, n] if wanted else [1, 1, 1]) for wanted in (left, right))
    info = memref.alloc(ir.MemRefType.get([count], i32), [], [])
    matrix_size = matrix_bytes(x.type)
    vector_bytes = matrix_size // n if n else 0
    vector_strides = (matrix_size if wanted else 0 for wanted in (left, right))
    strides = [matrix_size, *[vector_bytes] * values_count, *vector_strides]
    bases = [address(b) for b in (matrix, *values, vl, vr)]
    jobs = [arith.constant(i8, ord("V" if wanted else "N")) for wanted in (left, right)]

    def one(k: ir.Value) -> None:
        a, *w, l_, r_ = (pointer_at(base, k, stride) for base, stride in zip(bases, strides, strict=True))
        status = status_if_finite(op, operand_element, n, n, a, lambda: func.CallOp([i32], symbol, [
            int32(ROW_MAJOR), *jobs, int32(n), a, int32(n), *w, l_, int32(n if left else 1),
            r_, int32(n if right else 1)]).result)
        memref.store(status, info, [k])

    if count and n:
        for_each_matrix(count, one)
    info_tensor = as_tensor(info)
    same, per_matrix = per_matrix_maps(2)
    values_type = ir.RankedTensorType.get([count, n], element)
    vectors_type = ir.RankedTensorType.get([count, n, n], element)
    wanted = [b for b, flag in ((vl, left), (vr, right)) if flag]
    if real_input:
        wi = as_tensor(values[1])
        eigenvalues = generic([as_tensor(values[0]), wi, info_tensor], values_type,
                              lambda re, im, status: _nan_unless_ok(cplx.create_(element, re, im), status),
                              [same, same, per_matrix])
        vectors = [_unpack(as_tensor(b), wi, info_tensor, vectors_type) for b in wanted]
    else:
        eigenvalues = generic([as_tensor(values[0]), info_tensor], values_type, _nan_unless_ok,
                              [same, per_matrix])
        vectors = [generic([as_tensor(b), info_tensor], vectors_type, _nan_unless_ok, per_matrix_maps(3))
                   for b in wanted]
    outs = [unfold_batch(v, r.type) for v, r in zip([eigenvalues, *vectors], op.results, strict=True)]
    for result, replacement in zip(op.results[1:], outs[1:], strict=True):
        result.replace_all_uses_with(replacement)
    return outs[0]


RULES: dict[str, Rule] = {"eig": _eig}
